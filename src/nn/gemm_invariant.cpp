// Batch-invariant C = alpha * A Bᵀ + beta * C (see gemm.hpp): every C element is one dot product accumulated in
// a fixed order that depends only on k, so a row's result never depends on how many rows share the call.
// OpenMP splits the output columns; no element is ever split across threads.
#include <atomic>

#include "nn/gemm.hpp"

namespace trex::nn {

namespace {
std::atomic<int> g_invariant_depth{0};

constexpr int kLanes = 16;

// Fixed-order dot product: kLanes strided partial sums, then a fixed pairwise tree, then the tail.
inline float dot_fixed(const float* a, const float* b, int64_t k) {
  float acc[kLanes] = {};
  int64_t t = 0;
  for (; t + kLanes <= k; t += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += a[t + l] * b[t + l];
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  float s = acc[0];
  for (; t < k; ++t) s += a[t] * b[t];
  return s;
}
}  // namespace

BatchInvariantScope::BatchInvariantScope() { g_invariant_depth.fetch_add(1, std::memory_order_relaxed); }
BatchInvariantScope::~BatchInvariantScope() { g_invariant_depth.fetch_sub(1, std::memory_order_relaxed); }
bool batch_invariant_active() { return g_invariant_depth.load(std::memory_order_relaxed) > 0; }

void gemm_nt_invariant(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float beta, float* c, int64_t ldc) {
  // Each weight row (column j of C) is read once and dotted with every row of A (A is small when decoding).
#pragma omp parallel for schedule(static) if (n * m * k > 65536)
  for (int64_t j = 0; j < n; ++j) {
    const float* bj = b + j * ldb;
    for (int64_t i = 0; i < m; ++i) {
      const float s = alpha * dot_fixed(a + i * lda, bj, k);
      float& out = c[i * ldc + j];
      out = beta == 0.0f ? s : s + beta * out;
    }
  }
}

}  // namespace trex::nn
