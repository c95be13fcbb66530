// Token sets, MinHash/LSH index and the brute-force reference.
#include "ordata/dedup.hpp"

#include <algorithm>
#include <string>

#include "util/rng.hpp"

namespace trex::ordata {

namespace {
uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (char c : s) {
    h ^= uint8_t(c);
    h *= 1099511628211ULL;
  }
  return h;
}
bool token_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }
}  // namespace

TokenSet token_set(std::string_view text) {
  TokenSet out;
  std::string tok;
  auto flush = [&] {
    if (tok.size() >= 3) out.push_back(fnv1a(tok));
    tok.clear();
  };
  for (char ch : text) {
    char c = (ch >= 'A' && ch <= 'Z') ? char(ch - 'A' + 'a') : ch;
    if (token_char(c)) tok.push_back(c);
    else flush();
  }
  flush();
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double jaccard(const TokenSet& a, const TokenSet& b) {
  if (a.empty() && b.empty()) return 1.0;
  size_t i = 0, j = 0, inter = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) ++inter, ++i, ++j;
    else if (a[i] < b[j]) ++i;
    else ++j;
  }
  return double(inter) / double(a.size() + b.size() - inter);
}

std::vector<uint64_t> minhash(const TokenSet& tokens) {
  std::vector<uint64_t> sig(kMinHashSize, UINT64_MAX);
  for (uint64_t t : tokens)
    for (int k = 0; k < kMinHashSize; ++k) {
      uint64_t s = t ^ (uint64_t(k + 1) * 0x9e3779b97f4a7c15ULL);
      uint64_t h = splitmix64(s);
      if (h < sig[size_t(k)]) sig[size_t(k)] = h;
    }
  return sig;
}

uint64_t NearDuplicateIndex::band_key(const std::vector<uint64_t>& sig, int band) {
  uint64_t h = uint64_t(band) * 0xd1342543de82ef95ULL + 1;
  for (int r = 0; r < kMinHashRows; ++r) {
    uint64_t s = h ^ sig[size_t(band * kMinHashRows + r)];
    h = splitmix64(s);
  }
  return h;
}

double NearDuplicateIndex::max_similarity(const TokenSet& tokens, const std::vector<uint64_t>& sig) const {
  double best = 0.0;
  std::vector<uint32_t> seen;
  for (int b = 0; b < kMinHashBands; ++b) {
    auto it = buckets_.find(band_key(sig, b));
    if (it == buckets_.end()) continue;
    for (uint32_t id : it->second) {
      if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
      seen.push_back(id);
      best = std::max(best, jaccard(tokens, sets_[id]));
    }
  }
  return best;
}

void NearDuplicateIndex::add(TokenSet tokens, const std::vector<uint64_t>& sig) {
  uint32_t id = uint32_t(sets_.size());
  sets_.push_back(std::move(tokens));
  for (int b = 0; b < kMinHashBands; ++b) buckets_[band_key(sig, b)].push_back(id);
}

PairMax max_jaccard_bruteforce(const std::vector<TokenSet>& sets) {
  PairMax best;
  for (size_t i = 0; i < sets.size(); ++i)
    for (size_t j = i + 1; j < sets.size(); ++j) {
      double v = jaccard(sets[i], sets[j]);
      if (v > best.value) best = {v, i, j};
    }
  return best;
}

}  // namespace trex::ordata
