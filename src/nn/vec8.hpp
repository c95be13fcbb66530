// Eight floats as one GCC vector type (AVX2 under the kernel flags, SSE pairs otherwise), for loops the
// auto-vectoriser leaves scalar: per-key dots in attention, eight matrices in lanes in the batched Sinkhorn. The
// arithmetic order is the one the code states. Include only from sources built with TREX_KERNEL_FLAGS (src/nn,
// src/model): a vector return value's ABI depends on -march, so every user must share the flags.
#pragma once

namespace trex::nn {

typedef float Vec8 __attribute__((vector_size(32)));

[[gnu::always_inline]] inline Vec8 load8(const float* p) {
  Vec8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store8(float* p, Vec8 v) { __builtin_memcpy(p, &v, sizeof v); }

}  // namespace trex::nn
