// Test vectors and float comparisons shared by the kernel tests: normal random vectors from trex::Rng, the
// largest magnitude of a vector, and a float moved by whole representable steps (the ULP slack a GPU's exp or
// log may take, in the CPU references of the CUDA kernels).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <vector>

#include "util/rng.hpp"

namespace trex::testing {

// n draws of mean + scale * N(0, 1), in r's order.
template <class T = float>
std::vector<T> randn(Rng& r, size_t n, double scale = 1.0, double mean = 0.0) {
  std::vector<T> v(n);
  for (auto& x : v) x = T(mean + scale * r.normal());
  return v;
}

inline double max_abs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, double(std::fabs(x)));
  return m;
}

// x moved |ulps| representable steps up (ulps > 0) or down.
inline float move_ulps(float x, int ulps) {
  for (int n = 0; n < std::abs(ulps); ++n) x = std::nextafter(x, ulps > 0 ? INFINITY : -INFINITY);
  return x;
}

}  // namespace trex::testing
