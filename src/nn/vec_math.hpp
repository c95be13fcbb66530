// Vectorisable float math for the hot element-wise loops: fast_expf (Cephes-style range reduction + degree-6
// polynomial, branch-free so `#pragma omp simd` / the auto-vectoriser turn it into AVX code; glibc's expf is a
// scalar call that blocks vectorisation; the kernels are built with -fno-trapping-math so the selects
// if-convert). Relative error ≤ 2 ulp on [-87, 88]; exp(x < -87.3) = 0, exp(x > 88.3)
// saturates at exp(88.3), NaN propagates. The reference is std::exp (tests/nn/vec_math_test.cpp compares them).
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

namespace trex::nn {

inline float fast_expf(float x) {
  float xc = x > -87.3f ? x : -87.3f;  // ternaries, not fmin/fmax: those block vectorisation
  xc = xc < 88.3f ? xc : 88.3f;
  const float n = std::floor(xc * 1.44269504088896341f + 0.5f);  // round(x / ln 2)
  float r = xc - n * 0.693359375f;                                 // Cody-Waite: ln 2 = C1 + C2
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (int32_t(n) + 127) << 23;  // 2^n, n in [-126, 128)
  const float scale = std::bit_cast<float>(bits);
  const float y = p * scale;
  return x < -87.3f ? 0.0f : (x != x ? x : y);
}

// 1 / (1 + e^-x) through fast_expf.
inline float fast_sigmoidf(float x) { return 1.0f / (1.0f + fast_expf(-x)); }

}  // namespace trex::nn
