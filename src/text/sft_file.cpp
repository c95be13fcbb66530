// SftFile reader.
#include "text/sft_file.hpp"

#include <cstring>

#include "util/error.hpp"

namespace trex::text {

SftFile::SftFile(const std::filesystem::path& path) : map_(path) {
  SourceLocation where{path.string()};
  if (map_.size() < sizeof header_) throw Error(where, "too small for an SFT packed file");
  std::memcpy(&header_, map_.data(), sizeof header_);
  if (std::memcmp(header_.magic, "TREXSFT1", 8) != 0) throw Error(where, "not an SFT packed file (bad magic)");
  if (header_.version != 1 || header_.header_bytes != 64)
    throw Error(where, "unsupported SFT file version " + std::to_string(header_.version));
  if (header_.seq_len == 0 || header_.seq_len > (uint64_t(1) << 30) || header_.num_sequences > (uint64_t(1) << 40))
    throw Error(where, "implausible header (seq_len " + std::to_string(header_.seq_len) + ")");
  uint64_t want = 64 + 13 * header_.num_sequences * header_.seq_len;
  if (map_.size() != want)
    throw Error(where, "size " + std::to_string(map_.size()) + " does not match the header (" + std::to_string(want) + ")");
}

}  // namespace trex::text
