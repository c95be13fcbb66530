// Near-duplicate filter (report §8): token-set Jaccard (lowercase alphanumeric/underscore tokens of
// length >= 3) against everything already accepted, threshold 0.9 by default. The fast path is
// MinHash signatures with LSH banding to find candidates, followed by the exact Jaccard on the
// candidates; max_jaccard_bruteforce() is the readable reference the tests compare against.
#pragma once
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace trex::ordata {

using TokenSet = std::vector<uint64_t>;  // sorted, unique token hashes

TokenSet token_set(std::string_view text);
double jaccard(const TokenSet& a, const TokenSet& b);

constexpr int kMinHashBands = 20, kMinHashRows = 6, kMinHashSize = kMinHashBands * kMinHashRows;
std::vector<uint64_t> minhash(const TokenSet& tokens);

class NearDuplicateIndex {
 public:
  explicit NearDuplicateIndex(double threshold = 0.9) : threshold_(threshold) {}
  // Highest exact Jaccard against any indexed set among the LSH candidates (0 when none).
  double max_similarity(const TokenSet& tokens, const std::vector<uint64_t>& signature) const;
  bool is_near_duplicate(const TokenSet& tokens, const std::vector<uint64_t>& signature) const {
    return max_similarity(tokens, signature) > threshold_;
  }
  void add(TokenSet tokens, const std::vector<uint64_t>& signature);
  size_t size() const { return sets_.size(); }
  double threshold() const { return threshold_; }

 private:
  static uint64_t band_key(const std::vector<uint64_t>& sig, int band);
  double threshold_;
  std::vector<TokenSet> sets_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> buckets_;
};

// Reference: the maximum pairwise Jaccard over all pairs (O(n^2)), and the pair reaching it.
struct PairMax {
  double value = 0.0;
  size_t i = 0, j = 0;
};
PairMax max_jaccard_bruteforce(const std::vector<TokenSet>& sets);

}  // namespace trex::ordata
