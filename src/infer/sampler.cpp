// Sampling: candidates sorted by logit (ties by id), truncated by top-k, softmax at the temperature in double,
// truncated by top-p, then one uniform draw from trex::Rng over the kept mass.
#include "infer/sampler.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace trex::infer {

int32_t argmax(std::span<const float> logits) {
  if (logits.empty()) throw Error("argmax of empty logits");
  int32_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[size_t(best)]) best = int32_t(i);
  return best;
}

int32_t Sampler::sample(std::span<const float> logits) {
  if (p_.temperature <= 0) return argmax(logits);
  const size_t V = logits.size();
  cand_.resize(V);
  for (size_t i = 0; i < V; ++i) cand_[i] = {double(logits[i]), int32_t(i)};
  auto by_logit = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
  size_t keep = V;
  if (p_.top_k > 0 && size_t(p_.top_k) < V) {
    keep = size_t(p_.top_k);
    std::partial_sort(cand_.begin(), cand_.begin() + long(keep), cand_.end(), by_logit);
    cand_.resize(keep);
  } else {
    std::sort(cand_.begin(), cand_.end(), by_logit);
  }
  const double mx = cand_[0].first;
  double sum = 0;
  for (auto& c : cand_) {
    c.first = std::exp((c.first - mx) / p_.temperature);
    sum += c.first;
  }
  for (auto& c : cand_) c.first /= sum;
  if (p_.top_p < 1.0) {
    double cum = 0;
    size_t n = 0;
    while (n < cand_.size()) {
      cum += cand_[n].first;
      ++n;
      if (cum >= p_.top_p) break;
    }
    cand_.resize(std::max<size_t>(n, 1));
  }
  double total = 0;
  for (const auto& c : cand_) total += c.first;
  double u = rng_.uniform() * total;
  for (const auto& c : cand_) {
    u -= c.first;
    if (u < 0) return c.second;
  }
  return cand_.back().second;
}

}  // namespace trex::infer
