// Megatron-compatible .bin/.idx writer and reader.
#include "text/token_shards.hpp"

#include <cstring>

#include "util/error.hpp"

namespace trex::text {
namespace {

constexpr char kMagic[9] = {'M', 'M', 'I', 'D', 'I', 'D', 'X', '\0', '\0'};
constexpr uint64_t kVersion = 1;

template <typename T>
void put(std::string& s, T v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);  // little-endian hosts only (x86-64, aarch64)
}
template <typename T>
T get(const std::string& s, size_t& at, const std::string& path) {
  if (at + sizeof(T) > s.size()) throw Error(SourceLocation{path}, "index truncated at byte " + std::to_string(at));
  T v;
  std::memcpy(&v, s.data() + at, sizeof v);
  at += sizeof v;
  return v;
}

}  // namespace

TokenDtype dtype_for_vocab(size_t vocab_size) { return vocab_size <= 65536 ? TokenDtype::UInt16 : TokenDtype::Int32; }
size_t dtype_bytes(TokenDtype d) { return d == TokenDtype::UInt16 ? 2 : 4; }
const char* dtype_name(TokenDtype d) { return d == TokenDtype::UInt16 ? "uint16" : "int32"; }

ShardWriter::ShardWriter(const std::filesystem::path& prefix, TokenDtype dtype)
    : prefix_(prefix), dtype_(dtype), bin_(std::make_unique<AtomicFile>(prefix.string() + ".bin")) {}

void ShardWriter::add_document(std::span<const TokenId> ids) {
  const size_t w = dtype_bytes(dtype_);
  scratch_.resize(ids.size() * w);
  for (size_t i = 0; i < ids.size(); ++i) {
    TokenId id = ids[i];
    if (id < 0 || (dtype_ == TokenDtype::UInt16 && id > 65535))
      throw Error(SourceLocation{prefix_.string() + ".bin"}, "token id " + std::to_string(id) + " does not fit " + dtype_name(dtype_));
    if (dtype_ == TokenDtype::UInt16) {
      uint16_t v = uint16_t(id);
      std::memcpy(&scratch_[i * 2], &v, 2);
    } else {
      std::memcpy(&scratch_[i * 4], &id, 4);
    }
  }
  bin_->write(std::string_view(reinterpret_cast<const char*>(scratch_.data()), scratch_.size()));
  pointers_.push_back(int64_t(tokens_ * w));
  lengths_.push_back(int32_t(ids.size()));
  tokens_ += ids.size();
}

void ShardWriter::commit() {
  std::string idx(kMagic, sizeof kMagic);
  put<uint64_t>(idx, kVersion);
  put<uint8_t>(idx, uint8_t(dtype_));
  put<uint64_t>(idx, lengths_.size());      // sequences
  put<uint64_t>(idx, lengths_.size() + 1);  // document index entries: one document per sequence
  for (int32_t l : lengths_) put<int32_t>(idx, l);
  for (int64_t p : pointers_) put<int64_t>(idx, p);
  for (uint64_t d = 0; d <= lengths_.size(); ++d) put<int64_t>(idx, int64_t(d));
  bin_->commit();
  write_file_atomic(prefix_.string() + ".idx", idx);
}

ShardReader::ShardReader(const std::filesystem::path& prefix) : prefix_(prefix.string()) {
  std::string idx_path = prefix_ + ".idx";
  std::string idx = read_file(idx_path);
  size_t at = 0;
  if (idx.size() < sizeof kMagic || std::memcmp(idx.data(), kMagic, sizeof kMagic) != 0)
    throw Error(SourceLocation{idx_path}, "not a Megatron indexed-dataset index (bad magic)");
  at = sizeof kMagic;
  uint64_t version = get<uint64_t>(idx, at, idx_path);
  if (version != kVersion) throw Error(SourceLocation{idx_path}, "unsupported index version " + std::to_string(version));
  uint8_t code = get<uint8_t>(idx, at, idx_path);
  if (code != uint8_t(TokenDtype::UInt16) && code != uint8_t(TokenDtype::Int32))
    throw Error(SourceLocation{idx_path}, "unsupported token dtype code " + std::to_string(code));
  dtype_ = TokenDtype(code);
  uint64_t n = get<uint64_t>(idx, at, idx_path);
  uint64_t ndoc = get<uint64_t>(idx, at, idx_path);
  if (n > idx.size() || at + n * 12 + ndoc * 8 != idx.size())
    throw Error(SourceLocation{idx_path}, "index size does not match its counts");
  lengths_.resize(n);
  offsets_.resize(n);
  std::memcpy(lengths_.data(), idx.data() + at, n * 4);
  at += n * 4;
  const size_t w = dtype_bytes(dtype_);
  for (uint64_t i = 0; i < n; ++i) {
    int64_t p;
    std::memcpy(&p, idx.data() + at + i * 8, 8);
    if (lengths_[i] < 0 || p != int64_t(tokens_ * w))
      throw Error(SourceLocation{idx_path}, "sequence " + std::to_string(i) + " is not contiguous with the previous one");
    offsets_[i] = tokens_;
    tokens_ += uint64_t(lengths_[i]);
  }
  bin_ = MappedFile(prefix_ + ".bin");
  if (bin_.size() != tokens_ * w)
    throw Error(SourceLocation{prefix_ + ".bin"}, "size " + std::to_string(bin_.size()) + " bytes does not match the index (" +
                                                      std::to_string(tokens_ * w) + ")");
}

void ShardReader::read(uint64_t at, size_t n, TokenId* out) const {
  if (at + n > tokens_) throw Error(SourceLocation{prefix_ + ".bin"}, "read past the end of the shard");
  if (dtype_ == TokenDtype::UInt16) {
    const uint8_t* p = bin_.data() + at * 2;
    for (size_t i = 0; i < n; ++i) {
      uint16_t v;
      std::memcpy(&v, p + i * 2, 2);
      out[i] = TokenId(v);
    }
  } else {
    std::memcpy(out, bin_.data() + at * 4, n * 4);
  }
}

std::vector<TokenId> ShardReader::document(uint64_t doc) const {
  std::vector<TokenId> ids(document_length(doc));
  read(document_offset(doc), ids.size(), ids.data());
  return ids;
}

}  // namespace trex::text
