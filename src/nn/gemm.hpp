// Row-major single-precision GEMM through OpenBLAS (cblas_sgemm), plus a readable reference loop used by the
// tests. C[m,n] = alpha * op(A) op(B) + beta * C, op = transpose when the flag is set.
//
// Threads: trex runs ONE thread pool, OpenMP's. OpenBLAS is driven single-threaded (its own pthread pool
// would spin beside OpenMP on the 2 cores, MACHINE.md §2) and the GEMMs are spread over the OpenMP threads
// here: a batch of independent GEMMs (gemm_batch: the experts of an MoE layer, the dx and dW products of a
// linear's backward) runs one GEMM per thread, dynamically scheduled; a batch smaller than the thread count
// has its GEMMs cut into row (or column) blocks of C. Called inside a parallel region, everything runs on the
// calling thread.
#pragma once
#include <cstdint>
#include <span>

namespace trex::nn {

// One C = alpha op(A) op(B) + beta C.
struct GemmCall {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float beta = 0.0f;
  float* c = nullptr;
  int64_t ldc = 0;
  // Optional operands already rounded to bf16 (float_to_bf16, gemm_bf16.hpp; same layout and leading dimension
  // as a / b): the bf16 path reads these instead of rounding a / b, with the same result. The producer of an
  // operand that is only ever multiplied in bf16 can write it once in half the bytes (the logits' gradient);
  // a / b may then be null, and such a call needs the bf16 path (gemm_batch throws otherwise).
  const uint16_t* a_bf16 = nullptr;
  const uint16_t* b_bf16 = nullptr;
  // A product whose row count depends on the data (the routed experts' batches): in fp32 it runs trex's
  // fixed-order kernel (gemm_fixed_order.hpp), so each row's result is bitwise independent of the other rows;
  // the bf16 kernel is already. OpenBLAS's is not on every CPU (issue #20).
  bool rows_invariant = false;
};

// Runs every call; the calls' C blocks must not overlap (they may run at the same time). The same bits on every
// run for a given thread count (the cut depends only on the shapes and the thread count; OpenBLAS's results can
// depend on m, so a different thread count may round differently).
void gemm_batch(std::span<const GemmCall> calls);
// The reference: the calls one after another through gemm_reference.
void gemm_batch_reference(std::span<const GemmCall> calls);

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Triple loop in double accumulation: the reference for gemm().
void gemm_reference(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                    int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// Batch invariance (used by incremental decoding): while any BatchInvariantScope is alive, gemm()/gemm_batch() with
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

// y[m,n] = x[m,k] W[n,k]^T (+ y if accumulate): the nn.Linear convention (weights [out, in]). x_bf16: x already
// in bf16 (GemmCall::a_bf16), for an input that several products read.
inline GemmCall linear_call(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k,
                            bool accumulate = false, const uint16_t* x_bf16 = nullptr) {
  return GemmCall{false, true, m, n, k, 1.0f, x, k, w, k, accumulate ? 1.0f : 0.0f, y, n, x_bf16};
}
inline void linear(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k, bool accumulate = false,
                   const uint16_t* x_bf16 = nullptr) {
  const GemmCall c = linear_call(x, w, y, m, n, k, accumulate, x_bf16);
  gemm_batch({&c, 1});
}
// Backward of linear: dx[m,k] (+)= dy[m,n] W[n,k]; dW[n,k] += dy^T x. The two products are independent and
// have the same FLOPs: they run side by side.
// dy_bf16 / x_bf16: dy / x already in bf16 (GemmCall::a_bf16 / b_bf16); dy / x may then be null.
inline GemmCall linear_dx_call(const float* w, const float* dy, float* dx, int64_t m, int64_t n, int64_t k,
                               bool accumulate_dx, const uint16_t* dy_bf16 = nullptr) {
  return GemmCall{false, false, m, k, n, 1.0f, dy, n, w, k, accumulate_dx ? 1.0f : 0.0f, dx, k, dy_bf16};
}
inline GemmCall linear_dw_call(const float* x, const float* dy, float* dw, int64_t m, int64_t n, int64_t k,
                               const uint16_t* dy_bf16 = nullptr, const uint16_t* x_bf16 = nullptr) {
  return GemmCall{true, false, n, k, m, 1.0f, dy, n, x, k, 1.0f, dw, k, dy_bf16, x_bf16};
}
inline void linear_backward(const float* x, const float* w, const float* dy, float* dx, float* dw, int64_t m,
                            int64_t n, int64_t k, bool accumulate_dx = false, const uint16_t* dy_bf16 = nullptr,
                            const uint16_t* x_bf16 = nullptr) {
  GemmCall calls[2];
  int count = 0;
  if (dx) calls[count++] = linear_dx_call(w, dy, dx, m, n, k, accumulate_dx, dy_bf16);
  if (dw) calls[count++] = linear_dw_call(x, dy, dw, m, n, k, dy_bf16, x_bf16);
  gemm_batch({calls, size_t(count)});
}

}  // namespace trex::nn
