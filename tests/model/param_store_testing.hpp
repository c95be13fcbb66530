// Helpers of the checkpoint tests: a parameter table filled with seeded noise, and bitwise equality of two
// float spans (a round trip must keep every bit, NaN payloads and signed zeros included).
#pragma once
#include <bit>
#include <cstdint>
#include <span>

#include "model/params.hpp"
#include "util/rng.hpp"

namespace trex::testing {

// Floats uniform in [-1, 1); integer parameters (hash-layer tables) in [0, int_range).
inline void fill_random(model::ParamStore& s, uint64_t seed, uint64_t int_range) {
  Rng rng(seed);
  for (float& x : s.params()) x = static_cast<float>(rng.uniform() * 2 - 1);
  for (int64_t& x : s.int_params()) x = static_cast<int64_t>(rng.next_u64() % int_range);
}

inline bool same_bits(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) return false;
  return true;
}

}  // namespace trex::testing
