// The packed SFT file sft.bin (docs/data-format.md): a 64-byte header, then four planes of
// num_sequences x seq_len values: tokens (int32), positions (int32, restarting at 0 in every sample),
// doc_ids (int32, 0.. per sample within its sequence, -1 for padding), loss_mask (uint8, 1 = target).
#pragma once
#include <cstdint>
#include <filesystem>

#include "text/mapped_file.hpp"

namespace trex::text {

struct SftFileHeader {
  char magic[8];          // "TREXSFT1"
  uint32_t version;       // 1
  uint32_t header_bytes;  // 64
  uint64_t seq_len;
  uint64_t num_sequences;
  int32_t pad_id;
  uint32_t reserved[7];
};
static_assert(sizeof(SftFileHeader) == 64);

class SftFile {
 public:
  explicit SftFile(const std::filesystem::path& path);  // validates header and size
  uint64_t seq_len() const { return header_.seq_len; }
  uint64_t sequences() const { return header_.num_sequences; }
  int32_t pad_id() const { return header_.pad_id; }
  const int32_t* tokens(uint64_t seq) const { return plane<int32_t>(0, seq); }
  const int32_t* positions(uint64_t seq) const { return plane<int32_t>(1, seq); }
  const int32_t* doc_ids(uint64_t seq) const { return plane<int32_t>(2, seq); }
  const uint8_t* loss_mask(uint64_t seq) const { return map_.data() + 64 + 12 * plane_elems() + seq * header_.seq_len; }

 private:
  uint64_t plane_elems() const { return header_.num_sequences * header_.seq_len; }
  template <typename T>
  const T* plane(int k, uint64_t seq) const {
    return reinterpret_cast<const T*>(map_.data() + 64 + 4 * plane_elems() * uint64_t(k)) + seq * header_.seq_len;
  }
  MappedFile map_;
  SftFileHeader header_{};
};

}  // namespace trex::text
