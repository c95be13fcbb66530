// SftDataset and CptDataset.
#include "text/datasets.hpp"

#include <algorithm>
#include <cstring>

#include "util/error.hpp"

namespace trex::text {
namespace fs = std::filesystem;

namespace {
Json read_manifest(const fs::path& p, const char* format) {
  Json m = parse_json_file(p);
  if (!m.is_object() || m.value("format", std::string()) != format)
    throw Error(SourceLocation{p.string()}, std::string("not a ") + format + " manifest");
  if (m.value("version", 0) != 1) throw Error(SourceLocation{p.string()}, "unsupported manifest version");
  return m;
}
}  // namespace

SftDataset::SftDataset(const fs::path& dir) {
  Json m = read_manifest(dir / "sft.json", "trex-sft-packed");
  file_ = std::make_unique<SftFile>(dir / m.value("file", std::string("sft.bin")));
  if (m.value("seq_len", uint64_t(0)) != file_->seq_len() || m.value("sequences", uint64_t(0)) != file_->sequences())
    throw Error(SourceLocation{(dir / "sft.json").string()}, "manifest does not match sft.bin");
  sha_ = m.value("tokenizer_sha256", std::string());
}

void SftDataset::read(uint64_t index, const SequenceView& out) const {
  if (index >= size()) throw Error("SFT sequence " + std::to_string(index) + " out of range");
  const size_t L = seq_len();
  std::memcpy(out.tokens, file_->tokens(index), L * 4);
  std::memcpy(out.positions, file_->positions(index), L * 4);
  std::memcpy(out.doc_ids, file_->doc_ids(index), L * 4);
  std::memcpy(out.loss_mask, file_->loss_mask(index), L);
}

CptDataset::CptDataset(const fs::path& dir, size_t seq_len) : seq_len_(seq_len) {
  if (seq_len < 2) throw Error("CPT sequence length must be at least 2");
  fs::path mp = dir / "cpt.json";
  Json m = read_manifest(mp, "trex-cpt-shards");
  sha_ = m.value("tokenizer_sha256", std::string());
  if (!m.contains("shards") || !m["shards"].is_array()) throw Error(SourceLocation{mp.string()}, "missing 'shards'");
  for (const Json& s : m["shards"]) {
    auto r = std::make_unique<ShardReader>(dir / s.at("prefix").get<std::string>());
    if (r->tokens() != s.value("tokens", uint64_t(0)))
      throw Error(SourceLocation{mp.string()}, "shard " + s.at("prefix").get<std::string>() + " does not match the manifest");
    shard_start_.push_back(tokens_);
    for (uint64_t d = 0; d < r->documents(); ++d) doc_start_.push_back(tokens_ + r->document_offset(d));
    tokens_ += r->tokens();
    shards_.push_back(std::move(r));
  }
  doc_start_.push_back(tokens_);
  windows_ = tokens_ / seq_len_;
}

void CptDataset::read(uint64_t index, const SequenceView& out) const {
  if (index >= windows_) throw Error("CPT window " + std::to_string(index) + " out of range");
  const uint64_t begin = index * seq_len_, end = begin + seq_len_;
  // tokens, shard by shard
  uint64_t at = begin;
  size_t s = size_t(std::upper_bound(shard_start_.begin(), shard_start_.end(), at) - shard_start_.begin()) - 1;
  while (at < end) {
    uint64_t shard_end = shard_start_[s] + shards_[s]->tokens();
    uint64_t n = std::min(end, shard_end) - at;
    shards_[s]->read(at - shard_start_[s], size_t(n), out.tokens + (at - begin));
    at += n;
    ++s;
  }
  // document ids and positions
  size_t d = size_t(std::upper_bound(doc_start_.begin(), doc_start_.end(), begin) - doc_start_.begin()) - 1;
  int32_t local = 0;
  uint64_t doc_begin = begin;
  for (uint64_t t = begin; t < end; ++t) {
    if (t >= doc_start_[d + 1]) {
      while (t >= doc_start_[d + 1]) ++d;
      ++local;
      doc_begin = t;
    }
    out.doc_ids[t - begin] = local;
    out.positions[t - begin] = int32_t(t - doc_begin);
    out.loss_mask[t - begin] = 1;
  }
}

std::unique_ptr<SequenceDataset> open_dataset(const fs::path& dir, size_t cpt_seq_len) {
  if (fs::exists(dir / "sft.json")) return std::make_unique<SftDataset>(dir);
  if (fs::exists(dir / "cpt.json")) return std::make_unique<CptDataset>(dir, cpt_seq_len);
  throw Error(SourceLocation{dir.string()}, "no sft.json or cpt.json: not a packed dataset (or packing did not finish)");
}

}  // namespace trex::text
