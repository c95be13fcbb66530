// Seeded, platform-independent random numbers. std:: distributions differ between standard
// libraries, so every draw trex makes goes through these explicit algorithms (same seed, same bytes).
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

namespace trex {

// splitmix64: seeds and stream derivation.
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256** generator with explicit uniform/normal/shuffle helpers.
class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { reseed(seed); }
  void reseed(uint64_t seed) {
    uint64_t s = seed;
    for (auto& w : s_) w = splitmix64(s);
  }
  // Independent stream for a sub-task (e.g. item i of a batch) without consuming this one.
  static Rng derive(uint64_t seed, uint64_t stream) {
    uint64_t s = seed ^ (stream * 0xd1342543de82ef95ULL + 0x2545f4914f6cdd1dULL);
    return Rng(splitmix64(s));
  }
  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  double uniform() { return double(next_u64() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [lo, hi] (inclusive), unbiased (rejection).
  int64_t uniform_int(int64_t lo, int64_t hi) {
    uint64_t range = uint64_t(hi - lo) + 1;
    if (range == 0) return int64_t(next_u64());
    uint64_t limit = UINT64_MAX - UINT64_MAX % range;
    uint64_t x;
    do x = next_u64();
    while (x >= limit);
    return lo + int64_t(x % range);
  }
  bool bernoulli(double p) { return uniform() < p; }
  double normal() {  // Box-Muller, no cached second value so the stream stays simple
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  template <typename T>
  void shuffle(std::vector<T>& v) {  // Fisher-Yates
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[size_t(uniform_int(0, int64_t(i) - 1))]);
  }
  template <typename T>
  const T& pick(const std::vector<T>& v) { return v[size_t(uniform_int(0, int64_t(v.size()) - 1))]; }

  // Full state, for exact resume.
  std::vector<uint64_t> state() const { return {s_[0], s_[1], s_[2], s_[3]}; }
  void set_state(const std::vector<uint64_t>& s) {
    for (int i = 0; i < 4; ++i) s_[i] = s.at(i);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace trex
