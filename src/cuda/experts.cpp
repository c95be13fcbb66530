// Host orchestration of the routed experts on the device (experts.hpp): per expert, one Blas::gemm per product on
// the caller's stream, experts without rows skipped; the element-wise steps are experts.cu's kernels and ops.hpp's
// SwiGLU. The temporaries are per expert (sized by the busiest one) and reused from one expert to the next: the
// stream orders every use, so no expert's kernel can overwrite a buffer the previous expert's product still reads.
//
// Why one cublasLtMatmul per expert and not one grouped call yet:
// - cuBLASLt (13.0, what Blas links) has no grouped matmul: its batch modes (strided, pointer array) give every
//   member of the batch the same m, n, k, and the experts' row counts differ. cuBLAS's cublasGemmGroupedBatchedEx
//   (12.5+) takes per-group shapes, but it is cuBLAS, not cuBLASLt (another library, device pointer arrays built
//   per call), and NVIDIA describes its kernels as using warp-level MMA, not Hopper's wgmma. A CUTLASS-style
//   grouped kernel (one launch over every expert's tiles) is the real alternative; it is a kernel to write and
//   check, and only worth it once the table below says so.
// - At the model's sizes the per-expert products are not small (8192 tokens x 6 slots over 64 experts: about 768
//   rows per expert, d 4096, f 2048: 12.9 GFLOP per up product, ~16 us at 790 TFLOP/s), the launches are queued
//   asynchronously with cached plans, so the host's cost per call (microseconds) hides behind the device's work.
//   What a per-expert call does cost is occupancy: 768 x 2048 is 48 output tiles of 128 x 256 on 132 SMs, one
//   partial wave per product, where a grouped kernel would run all 64 experts' 3,072 tiles in full waves.
// What the perf table (trex_cuda_op_perf) would show: the experts' forward + backward TFLOP/s (18 rows d f FLOP)
// beside the dense bf16 GEMMs of the same k and n (the 8192 x 4096 x 4096 rows). Close to them: the per-expert
// calls are fine. Well under (the partial waves, or the tail of small experts under uneven routing): the grouped
// kernel, or the experts spread over a few streams, is the next step.
// Also not done here: Blas caches one plan per distinct shape, and m is the expert's row count, which changes from
// step to step: each new count costs one heuristic query the first time it is seen (and a cached plan).
#include "cuda/experts.hpp"

#include <algorithm>
#include <string>

#include "cuda/ops.hpp"
#include "util/error.hpp"

namespace trex::cuda {

namespace {

size_t aligned(size_t bytes) { return (bytes + DeviceArena::kAlign - 1) & ~(DeviceArena::kAlign - 1); }

// Checks the offsets and returns the busiest expert's rows.
int64_t max_rows(const int64_t* offsets, int64_t count, const char* who) {
  if (count < 0 || !offsets || offsets[0] != 0) throw Error(std::string(who) + ": offsets must start at 0");
  int64_t m = 0;
  for (int64_t e = 0; e < count; ++e) {
    const int64_t n = offsets[e + 1] - offsets[e];
    if (n < 0)
      throw Error(std::string(who) + ": offsets decrease at expert " + std::to_string(e) + " (" +
                  std::to_string(offsets[e]) + " then " + std::to_string(offsets[e + 1]) + ")");
    m = std::max(m, n);
  }
  return m;
}

void check_shape(const DeviceExpertShape& s, const char* who) {
  if (s.d <= 0 || s.f <= 0)
    throw Error(std::string(who) + ": bad shape d=" + std::to_string(s.d) + " f=" + std::to_string(s.f));
}

// The bf16 operand of one weight matrix: its copy, or the matrix rounded into `buf` (queued on the stream).
const void* bf16_weight(const float* w, const uint16_t* copy, uint16_t* buf, int64_t n, cudaStream_t stream) {
  if (copy) return copy;
  if (!w) throw Error("cuda experts: a weight matrix is null");
  round_to_bf16(w, buf, n, stream);
  return buf;
}

bool any_missing_copy(const DeviceExpertWeights* experts, const int64_t* offsets, int64_t count) {
  for (int64_t e = 0; e < count; ++e)
    if (offsets[e + 1] > offsets[e] && (!experts[e].w1_bf16 || !experts[e].w3_bf16 || !experts[e].w2_bf16))
      return true;
  return false;
}

// Row-major products in nn::linear*'s conventions: C = A B^T; C = A B (+ C); C += A^T B.
DeviceGemm gemm_nt(int64_t m, int64_t n, int64_t k, const void* a, const void* b, float* c, GemmType t) {
  return DeviceGemm{false, true, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n, t};
}
DeviceGemm gemm_nn(int64_t m, int64_t n, int64_t k, const void* a, const void* b, float beta, float* c,
                   GemmType t) {
  return DeviceGemm{false, false, m, n, k, 1.0f, a, k, b, n, beta, c, n, t};
}
DeviceGemm gemm_tn(int64_t m, int64_t n, int64_t k, const void* a, const void* b, float* c, GemmType t) {
  return DeviceGemm{true, false, m, n, k, 1.0f, a, m, b, n, 1.0f, c, n, t};
}

// Scratch for the three matrices rounded to bf16 before their products: under bf16 products when some expert with
// rows lacks its bf16 copies (each matrix f d values, reused from expert to expert); nulls otherwise.
struct RoundedWeightBuffers {
  uint16_t *w1 = nullptr, *w3 = nullptr, *w2 = nullptr;
};
RoundedWeightBuffers rounded_weight_buffers(bool bf16, const DeviceExpertWeights* experts, const int64_t* offsets,
                                            int64_t count, int64_t fd, DeviceArena& scratch) {
  if (!bf16 || !any_missing_copy(experts, offsets, count)) return {};
  return {scratch.bf16s(fd), scratch.bf16s(fd), scratch.bf16s(fd)};
}

}  // namespace

size_t experts_scratch_bytes(GemmType type, const int64_t* offsets, int64_t count, const DeviceExpertShape& s,
                             bool rounds_weights) {
  const size_t m = size_t(max_rows(offsets, count, "cuda experts_scratch_bytes"));
  const size_t d = size_t(s.d), f = size_t(s.f);
  // the backward's needs include the forward's: dh, dg, du in fp32 (in fp32 the buffer of dg holds w * h first)
  size_t bytes = 3 * aligned(m * f * 4);
  if (type == GemmType::bf16) {
    bytes += 2 * aligned(m * f * 2) + 2 * aligned(m * d * 2);  // w*h then dg, du; dy, x
    if (rounds_weights) bytes += 3 * aligned(f * d * 2);
  }
  return bytes;
}

void experts_forward(Blas& blas, GemmType type, const DeviceExpertWeights* experts, int64_t count,
                     const int64_t* offsets, const DeviceExpertShape& s, const float* x, const float* w, float* g,
                     float* u, float* h, float* y, DeviceArena& scratch, cudaStream_t stream) {
  const int64_t nmax = max_rows(offsets, count, "cuda experts_forward");
  check_shape(s, "cuda experts_forward");
  const int64_t d = s.d, f = s.f, rows = offsets[count];
  if (rows == 0) return;
  const bool bf16 = type == GemmType::bf16;
  const auto mark = scratch.mark();
  float* hw = bf16 ? nullptr : scratch.floats(nmax * f);
  uint16_t* hw16 = bf16 ? scratch.bf16s(nmax * f) : nullptr;
  uint16_t* x16 = bf16 ? scratch.bf16s(nmax * d) : nullptr;
  const auto [w1b, w3b, w2b] = rounded_weight_buffers(bf16, experts, offsets, count, f * d, scratch);
  // 1. the up products of every expert
  for (int64_t e = 0; e < count; ++e) {
    const int64_t o = offsets[e], n = offsets[e + 1] - o;
    if (n == 0) continue;
    const DeviceExpertWeights& ew = experts[e];
    const void *a = x + o * d, *b1 = ew.w1, *b3 = ew.w3;
    if (bf16) {
      round_to_bf16(x + o * d, x16, n * d, stream);
      a = x16;
      b1 = bf16_weight(ew.w1, ew.w1_bf16, w1b, f * d, stream);
      b3 = bf16_weight(ew.w3, ew.w3_bf16, w3b, f * d, stream);
    }
    blas.gemm(gemm_nt(n, f, d, a, b1, g + o * f, type), stream);
    blas.gemm(gemm_nt(n, f, d, a, b3, u + o * f, type), stream);
  }
  // 2. SwiGLU over every row at once (one launch)
  swiglu_forward(g, u, h, rows * f, s.limit, stream);
  // 3. the routing weight applied before W2 (rounded once when the product reads bf16), and the down product
  for (int64_t e = 0; e < count; ++e) {
    const int64_t o = offsets[e], n = offsets[e + 1] - o;
    if (n == 0) continue;
    const DeviceExpertWeights& ew = experts[e];
    scale_rows(h + o * f, w + o, hw, hw16, n, f, stream);
    const void* b2 = bf16 ? bf16_weight(ew.w2, ew.w2_bf16, w2b, f * d, stream) : static_cast<const void*>(ew.w2);
    blas.gemm(gemm_nt(n, d, f, bf16 ? static_cast<const void*>(hw16) : hw, b2, y + o * d, type), stream);
  }
  scratch.release(mark);
}

void experts_backward(Blas& blas, GemmType type, const DeviceExpertWeights* experts, int64_t count,
                      const int64_t* offsets, const DeviceExpertShape& s, const float* x, const float* w,
                      const float* g, const float* u, const float* h, const float* dy, float* dx, float* dw,
                      DeviceArena& scratch, cudaStream_t stream) {
  const int64_t nmax = max_rows(offsets, count, "cuda experts_backward");
  check_shape(s, "cuda experts_backward");
  const int64_t d = s.d, f = s.f, rows = offsets[count];
  if (rows == 0) return;
  const bool bf16 = type == GemmType::bf16;
  const auto mark = scratch.mark();
  float* dg = scratch.floats(nmax * f);  // fp32: w * h first (the W2 gradient's operand), then dg
  float* dh = scratch.floats(nmax * f);  // dhw = dy W2, then dh = w * dhw in place
  float* du = scratch.floats(nmax * f);
  uint16_t *hw16 = nullptr, *du16 = nullptr, *dy16 = nullptr, *x16 = nullptr;
  if (bf16) {
    hw16 = scratch.bf16s(nmax * f);  // bf16(w * h), then bf16(dg)
    du16 = scratch.bf16s(nmax * f);
    dy16 = scratch.bf16s(nmax * d);
    x16 = scratch.bf16s(nmax * d);
  }
  const auto [w1b, w3b, w2b] = rounded_weight_buffers(bf16, experts, offsets, count, f * d, scratch);
  for (int64_t e = 0; e < count; ++e) {
    const int64_t o = offsets[e], n = offsets[e + 1] - o;
    if (n == 0) continue;
    const DeviceExpertWeights& ew = experts[e];
    if (!ew.g1 || !ew.g3 || !ew.g2)
      throw Error("cuda experts_backward: expert " + std::to_string(e) + " has rows but no gradient buffers");
    const float *xe = x + o * d, *dye = dy + o * d;
    // operands of the products: fp32 as they are, or their bf16 roundings
    const void *a_dy = dye, *a_x = xe, *a_hw = dg, *a_dg = dg, *a_du = du, *b1 = ew.w1, *b3 = ew.w3, *b2 = ew.w2;
    if (bf16) {
      round_to_bf16(dye, dy16, n * d, stream);
      round_to_bf16(xe, x16, n * d, stream);
      scale_rows(h + o * f, w + o, nullptr, hw16, n, f, stream);
      a_dy = dy16, a_x = x16, a_hw = hw16, a_dg = hw16, a_du = du16;
      b2 = bf16_weight(ew.w2, ew.w2_bf16, w2b, f * d, stream);
    } else {
      scale_rows(h + o * f, w + o, dg, nullptr, n, f, stream);
    }
    // dhw = dy W2 and the W2 gradient += dy^T (w * h)
    blas.gemm(gemm_nn(n, f, d, a_dy, b2, 0.0f, dh, type), stream);
    blas.gemm(gemm_tn(d, f, n, a_dy, a_hw, ew.g2, type), stream);
    // dw = <dhw, h> per row, dh = w * dhw; then the SwiGLU's backward (after the W2 gradient's product has read w*h)
    row_dot_then_scale(dh, h + o * f, w + o, dw + o, n, f, stream);
    swiglu_backward(g + o * f, u + o * f, dh, dg, du, n * f, s.limit, stream);
    if (bf16) {
      round_to_bf16(dg, hw16, n * f, stream);
      round_to_bf16(du, du16, n * f, stream);
      b1 = bf16_weight(ew.w1, ew.w1_bf16, w1b, f * d, stream);
      b3 = bf16_weight(ew.w3, ew.w3_bf16, w3b, f * d, stream);
    }
    // dx = dg W1 + du W3 (the second accumulating onto the first, as the CPU does), W1, W3 gradients += ^T x
    blas.gemm(gemm_nn(n, d, f, a_dg, b1, 0.0f, dx + o * d, type), stream);
    blas.gemm(gemm_nn(n, d, f, a_du, b3, 1.0f, dx + o * d, type), stream);
    blas.gemm(gemm_tn(f, d, n, a_dg, a_x, ew.g1, type), stream);
    blas.gemm(gemm_tn(f, d, n, a_du, a_x, ew.g3, type), stream);
  }
  scratch.release(mark);
}

}  // namespace trex::cuda
