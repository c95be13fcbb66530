// Packing JSONL into training data (docs/data-format.md):
//  - CPT: records' text -> token documents (BOS + text + EOS by default), seeded shuffle of the
//    documents, written as Megatron-style .bin/.idx shards (documents never split) + cpt.json.
//  - SFT: OpenAI-messages records -> chat-template tokens with a loss mask (assistant targets only),
//    truncation policy, seeded shuffle, first-fit packing into fixed-length sequences with per-token
//    document ids and positions (so attention never crosses samples), written as sft.bin + sft.json.
// Inputs are encoded in parallel; errors name file:line. Every file is written atomically and the
// manifest (cpt.json / sft.json) last: a folder without its manifest is not a dataset.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "text/chat_template.hpp"
#include "text/tokenizer.hpp"
#include "util/jsonl.hpp"

namespace trex::text {

struct PackStats {
  uint64_t records = 0;      // JSONL records read
  uint64_t documents = 0;    // documents / samples written
  uint64_t skipped_empty = 0;  // CPT: no tokens; SFT: no target token left
  uint64_t dropped_too_long = 0, truncated = 0;  // SFT
  uint64_t tokens = 0;         // tokens written (without padding)
  uint64_t target_tokens = 0;  // SFT: tokens with loss
  uint64_t sequences = 0, padding_tokens = 0;  // SFT
  uint64_t shards = 0;                         // CPT
  double seconds = 0;
  Json to_json() const;
};

struct CptPackOptions {
  bool add_bos = true, add_eos = true;
  bool parse_special = false;  // special-token strings in the text stay plain text
  bool shuffle = true;
  uint64_t seed = 1234;
  uint64_t shard_tokens = uint64_t(1) << 28;  // a new shard starts once this many tokens are written
  int threads = 0;
  std::string field = "text";
};

enum class Truncation { Drop, Right, Left };  // drop the sample / keep its start / keep its end
Truncation parse_truncation(const std::string& s);
const char* truncation_name(Truncation t);

struct SftPackOptions {
  size_t seq_len = 4096;
  Truncation truncation = Truncation::Drop;
  bool shuffle = true;
  uint64_t seed = 1234;
  size_t open_bins = 64;  // first-fit packing keeps this many partially filled sequences open
  int threads = 0;
  ChatFormat chat;
};

PackStats pack_cpt(const Tokenizer& tok, const std::vector<std::filesystem::path>& inputs,
                   const std::filesystem::path& out_dir, const CptPackOptions& opt);
PackStats pack_sft(const Tokenizer& tok, const std::vector<std::filesystem::path>& inputs,
                   const std::filesystem::path& out_dir, const SftPackOptions& opt);

// One tokenized SFT sample, and the packing of samples into sequences (exposed for tests).
struct SftSample {
  std::vector<TokenId> ids;
  std::vector<uint8_t> loss_mask;
};
// Applies the truncation policy; false when the sample must be dropped.
bool truncate_sample(SftSample& s, size_t seq_len, Truncation t, bool& truncated);
// Groups sample indices into sequences of at most seq_len tokens (first fit over `open_bins` open
// sequences, in the given order). Deterministic.
std::vector<std::vector<uint32_t>> first_fit_pack(const std::vector<SftSample>& samples,
                                                  const std::vector<uint32_t>& order, size_t seq_len,
                                                  size_t open_bins);

}  // namespace trex::text
