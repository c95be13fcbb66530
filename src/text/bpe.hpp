// The BPE model of a byte-level tokenizer: vocabulary (token text <-> id), ranked merges, and the merge
// of one pre-tokenized piece into ids. merge_piece() is the fast path (heap of candidate merges, as
// Hugging Face tokenizers does); merge_piece_reference() is the readable quadratic definition that the
// tests compare it with: repeatedly merge the adjacent pair of lowest rank, leftmost first.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace trex::text {

using TokenId = int32_t;

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenIndex = std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>>;

class BpeModel {
 public:
  // vocab: token text (byte-level form, e.g. "Ġthe") -> id; merges in rank order as (left, right) text.
  // Throws trex::Error when a merge names a token missing from the vocabulary, or a byte has no token.
  BpeModel(TokenIndex vocab, const std::vector<std::pair<std::string, std::string>>& merges);
  BpeModel() = default;

  // Ids of one piece of raw bytes (appended to out).
  void merge_piece(std::string_view bytes, std::vector<TokenId>& out) const;
  void merge_piece_reference(std::string_view bytes, std::vector<TokenId>& out) const;

  const TokenIndex& vocab() const { return vocab_; }
  const std::vector<std::pair<TokenId, TokenId>>& merges() const { return merges_; }
  TokenId byte_token(uint8_t b) const { return byte_ids_[b]; }
  // Lowest id count that covers every vocabulary id.
  TokenId id_bound() const { return id_bound_; }

  struct MergeResult {
    uint32_t rank;
    TokenId id;
  };
  // The merge of (left, right), or rank UINT32_MAX when there is none.
  MergeResult find_merge(TokenId left, TokenId right) const;

 private:
  static uint64_t key(TokenId a, TokenId b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
  TokenIndex vocab_;
  std::vector<std::pair<TokenId, TokenId>> merges_;
  TokenId byte_ids_[256] = {};
  TokenId id_bound_ = 0;
  // Open-addressing table (linear probing) from pair key to merge; empty slots hold key ~0.
  std::vector<uint64_t> table_keys_;
  std::vector<MergeResult> table_values_;
  uint64_t table_mask_ = 0;
};

}  // namespace trex::text
