// Next-token sampling for generation: greedy (temperature <= 0), temperature, top-k, top-p (nucleus), driven
// by trex::Rng so the same seed gives the same tokens on every platform.
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "util/rng.hpp"

namespace trex::infer {

struct SamplingParams {
  double temperature = 1.0;  // <= 0: greedy (argmax, ties to the lower id)
  double top_p = 1.0;        // keep the smallest set of most likely tokens whose probability reaches top_p
  int top_k = 0;             // keep the k most likely tokens (0 = off)
  uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& p) : p_(p), rng_(p.seed) {}
  // Picks the next token from `logits` [vocab].
  int32_t sample(std::span<const float> logits);
  const SamplingParams& params() const { return p_; }

 private:
  SamplingParams p_;
  Rng rng_;
  std::vector<std::pair<double, int32_t>> cand_;  // reused scratch: (probability or logit, id)
};

// Argmax with ties to the lower id.
int32_t argmax(std::span<const float> logits);

}  // namespace trex::infer
