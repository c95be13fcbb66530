// Per-key vector helpers of the attention inner loops (nn/sparse_attention.cpp, the indexer in
// model/attention.cpp): dots and axpys over one head_dim row at a time. Every dot has two nn::Vec8 accumulators
// summed in a fixed lane order, so its bits do not depend on where it is called. Include only from sources built
// with TREX_KERNEL_FLAGS (src/nn, src/model), as nn/vec8.hpp.
#pragma once
#include <cstdint>

#include "nn/vec8.hpp"

namespace trex::nn::attn_vec {

// The attention inner loops work one key (a head_dim row) at a time, with nn::Vec8 so every dot has two vector
// accumulators summed in a fixed order: left to `omp simd`, GCC kept the compressed entries' dots scalar.

// a · b over n floats
inline float dot(const float* a, const float* b, int64_t n) {
  Vec8 s0 = {}, s1 = {};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    s0 += load8(a + j) * load8(b + j);
    s1 += load8(a + j + 8) * load8(b + j + 8);
  }
  if (j + 8 <= n) {
    s0 += load8(a + j) * load8(b + j);
    j += 8;
  }
  const Vec8 s = s0 + s1;
  float t = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
  for (; j < n; ++j) t += a[j] * b[j];
  return t;
}

// out[t] = dot(q, k[t], n) for four keys, n a multiple of 8, with the same bits as dot(): the same two accumulators
// per key and the same lane order ((0+4)+(1+5))+((2+6)+(3+7)), but q is loaded once for the four keys and the
// four lane reductions run together as shuffles (a horizontal sum each was most of a 64-float dot).
inline void dot4(const float* q, const float* const* k, int64_t n, float* out) {
  Vec8 s0[4] = {}, s1[4] = {};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const Vec8 q0 = load8(q + j), q1 = load8(q + j + 8);
    for (int t = 0; t < 4; ++t) {
      s0[t] += q0 * load8(k[t] + j);
      s1[t] += q1 * load8(k[t] + j + 8);
    }
  }
  if (j + 8 <= n) {
    const Vec8 q0 = load8(q + j);
    for (int t = 0; t < 4; ++t) s0[t] += q0 * load8(k[t] + j);
  }
  Vec8 v[4];
  for (int t = 0; t < 4; ++t) v[t] = s0[t] + s1[t];
  typedef int Idx8 __attribute__((vector_size(32)));
  const Idx8 lo = {0, 1, 2, 3, 8, 9, 10, 11}, hi = {4, 5, 6, 7, 12, 13, 14, 15};
  const Idx8 even = {0, 2, 4, 6, 8, 10, 12, 14}, odd = {1, 3, 5, 7, 9, 11, 13, 15};
  // lanes l + (l + 4) for two keys per vector, then pairs of those, then the two halves
  const Vec8 u01 = __builtin_shuffle(v[0], v[1], lo) + __builtin_shuffle(v[0], v[1], hi);
  const Vec8 u23 = __builtin_shuffle(v[2], v[3], lo) + __builtin_shuffle(v[2], v[3], hi);
  const Vec8 w = __builtin_shuffle(u01, u23, even) + __builtin_shuffle(u01, u23, odd);
  const Vec8 r = __builtin_shuffle(w, w, even) + __builtin_shuffle(w, w, odd);
  for (int t = 0; t < 4; ++t) out[t] = r[t];
}

// out[e] = scale * dot(q, key(e), n) for e in [0, count): blocks of four keys through dot4 (the same bits).
template <class Key>
inline void dots(const float* q, Key key, int64_t count, int64_t n, float scale, float* out) {
  int64_t e = 0;
  if (n % 8 == 0)
    for (; e + 4 <= count; e += 4) {
      const float* k[4] = {key(e), key(e + 1), key(e + 2), key(e + 3)};
      dot4(q, k, n, out + e);
      for (int t = 0; t < 4; ++t) out[e + t] *= scale;
    }
  for (; e < count; ++e) out[e] = dot(q, key(e), n) * scale;
}

// y += a x + b z over n floats
inline void axpy2(float a, const float* x, float b, const float* z, float* y, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) store8(y + j, load8(y + j) + a * load8(x + j) + b * load8(z + j));
  for (; j < n; ++j) y[j] += a * x[j] + b * z[j];
}
inline void axpy(float a, const float* x, float* y, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) store8(y + j, load8(y + j) + a * load8(x + j));
  for (; j < n; ++j) y[j] += a * x[j];
}

}  // namespace trex::nn::attn_vec
