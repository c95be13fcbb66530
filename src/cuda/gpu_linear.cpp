// cuda::Model's matrix products and queued copies (gpu_model_impl.hpp): nn.Linear forward and backward on device
// parameters through cuBLASLt, in fp32 or with bf16 operands (every product's two operands rounded, as the CPU's
// --matmul bf16 recipe rounds them; the weights' bf16 copies are made once per optimizer step, not per product).
#include <cuda_runtime_api.h>

#include "cuda/check.hpp"
#include "cuda/gpu_model_impl.hpp"
#include "cuda/ops.hpp"
#include "util/error.hpp"

namespace trex::cuda::gm {

void upload_async(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  TREX_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
}
void zero_async(void* dst, size_t bytes, cudaStream_t s) { TREX_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, s)); }
void copy_async(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  TREX_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
}

const DeviceEntries& DeviceSeq::entries(int64_t m) const {
  for (const auto& e : ents)
    if (e.m == m) return e;
  throw Error("internal: no device compressed-entry grid for ratio " + std::to_string(m));
}

const uint16_t* bf16_copy(Ctx& c, const float* x, int64_t n) {
  if (!c.bf16()) return nullptr;
  uint16_t* out = c.arena.bf16s(n);
  round_to_bf16(x, out, n, c.s);
  return out;
}

const void* operand(Ctx& c, const float* x, const uint16_t* x16, int64_t n) {
  if (!c.bf16()) return x;
  if (x16) return x16;
  return bf16_copy(c, x, n);
}

void gemm(Ctx& c, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, const uint16_t* a16,
          int64_t lda, const float* b, const uint16_t* b16, int64_t ldb, float beta, float* out, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: C = beta C (cuBLASLt wants k >= 1)
    if (beta == 0.0f)
      TREX_CUDA_CHECK(cudaMemset2DAsync(out, size_t(ldc) * 4, 0, size_t(n) * 4, size_t(m), c.s));
    return;
  }
  // The extent of each operand as stored (rows x leading dimension), for its rounded copy.
  const int64_t a_rows = ta ? k : m, b_rows = tb ? n : k;
  DeviceGemm g;
  g.trans_a = ta;
  g.trans_b = tb;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = operand(c, a, a16, (a_rows - 1) * lda + (ta ? m : k));
  g.lda = lda;
  g.b = operand(c, b, b16, (b_rows - 1) * ldb + (tb ? k : n));
  g.ldb = ldb;
  g.beta = beta;
  g.c = out;
  g.ldc = ldc;
  g.type = c.type;
  c.blas.gemm(g, c.s);
}

void linear(Ctx& c, const float* x, const uint16_t* x16, int64_t w, float* y, int64_t m, int64_t n, int64_t k,
            bool accumulate) {
  gemm(c, false, true, m, n, k, x, x16, k, c.p(w), c.p16(w), k, accumulate ? 1.0f : 0.0f, y, n);
}

void linear_backward(Ctx& c, const float* x, const uint16_t* x16, int64_t w, const float* dy, const uint16_t* dy16,
                     float* dx, bool accumulate_dx, int64_t m, int64_t n, int64_t k, bool weight_grad) {
  // dy is read by both products: rounded once.
  if (c.bf16() && !dy16) dy16 = bf16_copy(c, dy, m * n);
  if (dx) gemm(c, false, false, m, k, n, dy, dy16, n, c.p(w), c.p16(w), k, accumulate_dx ? 1.0f : 0.0f, dx, k);
  if (weight_grad) gemm(c, true, false, n, k, m, dy, dy16, n, x, x16, k, 1.0f, c.g(w), k);
}

}  // namespace trex::cuda::gm
