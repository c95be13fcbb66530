// Row-major single-precision GEMM through OpenBLAS (cblas_sgemm), plus a readable reference loop used by the
// tests. C[m,n] = alpha * op(A) op(B) + beta * C, op = transpose when the flag is set.
#pragma once
#include <cstdint>

namespace trex::nn {

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Triple loop in double accumulation: the reference for gemm().
void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Batch invariance (used by incremental decoding): while any BatchInvariantScope is alive, gemm() with
// trans_b and without trans_a (every forward linear) runs gemm_nt_invariant, where each C element is one
// fixed-order dot product: a row's result is bitwise the same whatever the number of rows in the call.
// OpenBLAS's blocking makes it depend on m, so batching requests would otherwise change their outputs.
class BatchInvariantScope {
 public:
  BatchInvariantScope();
  ~BatchInvariantScope();
  BatchInvariantScope(const BatchInvariantScope&) = delete;
  BatchInvariantScope& operator=(const BatchInvariantScope&) = delete;
};
bool batch_invariant_active();
void gemm_nt_invariant(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float beta, float* c, int64_t ldc);

// y[m,n] = x[m,k] W[n,k]^T (+ y if accumulate): the nn.Linear convention (weights [out, in]).
inline void linear(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k, bool accumulate = false) {
  gemm(false, true, m, n, k, 1.0f, x, k, w, k, accumulate ? 1.0f : 0.0f, y, n);
}
// Backward of linear: dx[m,k] (+)= dy[m,n] W[n,k]; dW[n,k] += dy^T x.
inline void linear_backward(const float* x, const float* w, const float* dy, float* dx, float* dw, int64_t m,
                            int64_t n, int64_t k, bool accumulate_dx = false) {
  if (dx) gemm(false, false, m, k, n, 1.0f, dy, n, w, k, accumulate_dx ? 1.0f : 0.0f, dx, k);
  if (dw) gemm(true, false, n, k, m, 1.0f, dy, n, x, k, 1.0f, dw, k);
}

}  // namespace trex::nn
