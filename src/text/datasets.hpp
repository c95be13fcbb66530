// Fixed-length training sequences read from packed data. Every sequence carries, per token: the id,
// its position (restarting at 0 at each document's first token in the sequence), its document id
// within the sequence (0, 1, ...; -1 for padding), and its loss mask (1 = prediction target). Tokens
// with different document ids must never attend to each other (DEEPSEEK_V4.md §16).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "text/sft_file.hpp"
#include "text/token_shards.hpp"
#include "util/jsonl.hpp"

namespace trex::text {

struct SequenceView {
  int32_t* tokens;
  int32_t* positions;
  int32_t* doc_ids;
  uint8_t* loss_mask;
};

class SequenceDataset {
 public:
  virtual ~SequenceDataset() = default;
  virtual uint64_t size() const = 0;    // number of sequences
  virtual size_t seq_len() const = 0;
  virtual void read(uint64_t index, const SequenceView& out) const = 0;
  virtual const std::string& tokenizer_sha256() const = 0;
};

// SFT: the sequences of sft.bin, as packed (folder with sft.json).
class SftDataset : public SequenceDataset {
 public:
  explicit SftDataset(const std::filesystem::path& dir);
  uint64_t size() const override { return file_->sequences(); }
  size_t seq_len() const override { return size_t(file_->seq_len()); }
  void read(uint64_t index, const SequenceView& out) const override;
  const std::string& tokenizer_sha256() const override { return sha_; }

 private:
  std::unique_ptr<SftFile> file_;
  std::string sha_;
};

// CPT: the documents of all shards (cpt.json order) as one token stream, cut into consecutive windows
// of seq_len tokens (the tail shorter than a window is left out). A document cut by a window start
// begins that window at position 0. Every token is a target.
class CptDataset : public SequenceDataset {
 public:
  CptDataset(const std::filesystem::path& dir, size_t seq_len);
  uint64_t size() const override { return windows_; }
  size_t seq_len() const override { return seq_len_; }
  void read(uint64_t index, const SequenceView& out) const override;
  const std::string& tokenizer_sha256() const override { return sha_; }
  uint64_t tokens() const { return tokens_; }

 private:
  std::vector<std::unique_ptr<ShardReader>> shards_;
  std::vector<uint64_t> shard_start_;  // first stream token of each shard
  std::vector<uint64_t> doc_start_;    // first stream token of each document (+ end sentinel)
  uint64_t tokens_ = 0, windows_ = 0;
  size_t seq_len_;
  std::string sha_;
};

// Opens a packed folder: sft.json -> SftDataset, cpt.json -> CptDataset(seq_len).
std::unique_ptr<SequenceDataset> open_dataset(const std::filesystem::path& dir, size_t cpt_seq_len);

}  // namespace trex::text
