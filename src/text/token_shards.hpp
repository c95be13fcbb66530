// CPT token shards in Megatron-LM's indexed-dataset layout (docs/data-format.md): PREFIX.bin holds the
// token ids of every document back to back (uint16 when the vocabulary fits, else int32, little
// endian, no header); PREFIX.idx holds the document table. The reader maps .bin and reads the index.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "text/bpe.hpp"
#include "text/mapped_file.hpp"
#include "util/atomic_file.hpp"

namespace trex::text {

enum class TokenDtype : uint8_t { UInt16 = 8, Int32 = 4 };  // Megatron's dtype codes
TokenDtype dtype_for_vocab(size_t vocab_size);
size_t dtype_bytes(TokenDtype d);
const char* dtype_name(TokenDtype d);

class ShardWriter {
 public:
  ShardWriter(const std::filesystem::path& prefix, TokenDtype dtype);
  void add_document(std::span<const TokenId> ids);  // throws if an id does not fit the dtype
  void commit();                                     // both files appear complete or not at all
  uint64_t documents() const { return lengths_.size(); }
  uint64_t tokens() const { return tokens_; }

 private:
  std::filesystem::path prefix_;
  TokenDtype dtype_;
  std::unique_ptr<AtomicFile> bin_;
  std::vector<int32_t> lengths_;
  std::vector<int64_t> pointers_;
  uint64_t tokens_ = 0;
  std::vector<uint8_t> scratch_;
};

class ShardReader {
 public:
  explicit ShardReader(const std::filesystem::path& prefix);  // validates index against .bin size
  uint64_t documents() const { return lengths_.size(); }
  uint64_t tokens() const { return tokens_; }
  uint64_t document_length(uint64_t doc) const { return uint64_t(lengths_[doc]); }
  uint64_t document_offset(uint64_t doc) const { return offsets_[doc]; }  // in tokens
  TokenDtype dtype() const { return dtype_; }
  // Copies n tokens starting at token offset `at` (counted over the whole shard).
  void read(uint64_t at, size_t n, TokenId* out) const;
  std::vector<TokenId> document(uint64_t doc) const;

 private:
  std::string prefix_;
  TokenDtype dtype_ = TokenDtype::Int32;
  MappedFile bin_;
  std::vector<int32_t> lengths_;
  std::vector<uint64_t> offsets_;
  uint64_t tokens_ = 0;
};

}  // namespace trex::text
