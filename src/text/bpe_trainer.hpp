// Byte-level BPE training: text is pre-tokenized in parallel into a table of distinct pieces with
// counts, then merges are learned greedily (most frequent adjacent pair; ties to the smaller pair of
// ids) with incremental pair counts and a lazy max-heap, as Hugging Face's BpeTrainer does.
// Vocabulary: special tokens first (ids 0..), then the 256 byte tokens, then one token per merge.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "text/tokenizer.hpp"

namespace trex::text {

struct BpeTrainerOptions {
  size_t vocab_size = 32000;  // including special and byte tokens
  uint64_t min_frequency = 2;  // pairs seen fewer times are never merged
  size_t max_token_bytes = 64; // merges that would make a longer token are skipped
  int threads = 0;             // 0: hardware concurrency
  std::vector<std::string> special_tokens = {tokens::kBos, tokens::kEos,       tokens::kPad,       tokens::kUser,
                                             tokens::kAssistant, tokens::kThinkOpen, tokens::kThinkClose};
  std::string field = "text";  // JSONL field holding the text ("messages": every message's content)
  bool progress = false;
};

struct BpeTrainStats {
  uint64_t documents = 0, bytes = 0, distinct_pieces = 0, piece_occurrences = 0;
  size_t merges = 0;
  double pretokenize_seconds = 0, merge_seconds = 0;
};

class BpeTrainer {
 public:
  explicit BpeTrainer(BpeTrainerOptions opt, PreTokenizer pre = PreTokenizer::deepseek_v3());

  // Adds texts (counted in parallel); may be called repeatedly.
  void add_texts(const std::vector<std::string>& texts);
  // Reads JSONL files; errors name file:line (malformed JSON, bad UTF-8, missing/wrong field).
  void add_jsonl(const std::filesystem::path& path);
  // Learns the merges and returns the tokenizer.
  Tokenizer train();
  // Same merges, naive algorithm (recount every pair after each merge): the reference for tests.
  Tokenizer train_reference();
  const BpeTrainStats& stats() const { return stats_; }

 private:
  struct Word {
    std::vector<TokenId> symbols;
    uint64_t count;
  };
  void count_block(const std::vector<std::string_view>& texts);
  void setup(TokenIndex& vocab, std::vector<std::string>& id_text, std::vector<size_t>& id_bytes,
             std::vector<Word>& words) const;
  Tokenizer build(TokenIndex vocab, const std::vector<std::pair<std::string, std::string>>& merges) const;

  BpeTrainerOptions opt_;
  PreTokenizer pre_;
  std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>> piece_counts_;
  BpeTrainStats stats_;
};

// Text of one JSONL record for tokenizer training: the string field, or for "messages" every
// message's content joined by newlines. Throws trex::Error at `where` when the field is missing/wrong.
std::string record_text(const Json& record, const std::string& field, const SourceLocation& where);

}  // namespace trex::text
