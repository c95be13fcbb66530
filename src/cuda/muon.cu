// Muon on the device (optimizer.hpp): the momentum kernel, the Newton–Schulz iteration (Frobenius normalisation by
// a two-level double reduction in a fixed order, then three cuBLASLt products per step) and the scaled update.
// train::Optimizer::muon_tensor transposes a tall matrix to the wide orientation; here the tall matrix stays as it
// is and the products read it transposed (A = X^T X, X <- a X + X B^T), which is the same iteration on X^T.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cuda/bf16.cuh"
#include "cuda/check.hpp"
#include "cuda/launch.cuh"
#include "cuda/ops.hpp"
#include "cuda/optimizer.hpp"
#include "cuda/reduce.cuh"
#include "util/error.hpp"

namespace trex::cuda {

namespace {
constexpr int kThreads = 256;
constexpr int kNormBlocks = 512;  // fixed: the partial sums' grouping, and so the norm's bits, depend on n only

unsigned blocks_for(int64_t n) { return detail::grid_stride_blocks(n, kThreads); }

__global__ void momentum_kernel(float* __restrict__ m, const float* __restrict__ g, float* __restrict__ x, int64_t n,
                                float mu, float gs, bool nesterov) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float mi = mu * m[i] + g[i] * gs;
    m[i] = mi;
    x[i] = nesterov ? mu * mi + g[i] * gs : mi;
  }
}

// part[block] = the block's sum of x^2 in double (grid-stride over kNormBlocks blocks).
__global__ void sumsq_kernel(const float* __restrict__ x, int64_t n, double* __restrict__ part) {
  double s = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    s += double(x[i]) * double(x[i]);
  s = detail::block_reduce(s, detail::Sum{}, 0.0);
  if (threadIdx.x == 0) part[blockIdx.x] = s;
}

// One block: inv = float(1 / (sqrt(sum part) + 1e-7)), the CPU's normalisation factor.
__global__ void inv_norm_kernel(const double* __restrict__ part, int parts, float* __restrict__ inv) {
  double s = 0;
  for (int i = threadIdx.x; i < parts; i += blockDim.x) s += part[i];
  s = detail::block_reduce(s, detail::Sum{}, 0.0);
  if (threadIdx.x == 0) *inv = float(1.0 / (sqrt(s) + 1e-7));
}

__global__ void scale_kernel(float* __restrict__ x, int64_t n, const float* __restrict__ inv) {
  const float f = *inv;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    x[i] *= f;
}

__global__ void apply_kernel(float* __restrict__ p, const float* __restrict__ x, int64_t n, float decay, float lr,
                             float scale, uint16_t* __restrict__ p_bf16) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float pi = p[i] * decay - lr * scale * x[i];
    p[i] = pi;
    if (p_bf16) p_bf16[i] = detail::to_bf16(pi);
  }
}

size_t round_up(size_t b) { return (b + DeviceArena::kAlign - 1) / DeviceArena::kAlign * DeviceArena::kAlign; }
}  // namespace

NsCoefficients newton_schulz_coefficients(int step_index) {
  return step_index < 8 ? NsCoefficients{3.4445, -4.7750, 2.0315} : NsCoefficients{2.0, -1.5, 0.5};
}

size_t newton_schulz_scratch_bytes(int64_t rows, int64_t cols, GemmType type) {
  const size_t n = size_t(rows * cols), r = size_t(std::min(rows, cols));
  size_t b = round_up(n * 4) + 2 * round_up(r * r * 4) + round_up(kNormBlocks * 8) + round_up(4);
  if (type == GemmType::bf16) b += round_up(n * 2) + 2 * round_up(r * r * 2);
  return b;
}

size_t muon_scratch_bytes(int64_t rows, int64_t cols, GemmType type) {
  return round_up(size_t(rows * cols) * 4) + newton_schulz_scratch_bytes(rows, cols, type);
}

void newton_schulz(Blas& blas, float* x, int64_t rows, int64_t cols, int steps, GemmType type, DeviceArena& scratch,
                   cudaStream_t s) {
  if (rows <= 0 || cols <= 0) throw Error("newton_schulz: empty matrix " + std::to_string(rows) + "x" +
                                          std::to_string(cols));
  const int64_t n = rows * cols;
  const bool tall = rows > cols;
  const int64_t r = tall ? cols : rows;  // the small side: A and B are r x r
  const DeviceArena::Mark mark = scratch.mark();
  float* y = scratch.floats(n);
  float* A = scratch.floats(r * r);
  float* B = scratch.floats(r * r);
  double* part = scratch.doubles(kNormBlocks);
  float* inv = scratch.floats(1);
  uint16_t *x16 = nullptr, *a16 = nullptr, *b16 = nullptr;
  const bool bf16 = type == GemmType::bf16;
  if (bf16) {
    x16 = scratch.bf16s(n);
    a16 = scratch.bf16s(r * r);
    b16 = scratch.bf16s(r * r);
  }

  sumsq_kernel<<<kNormBlocks, kThreads, 0, s>>>(x, n, part);
  TREX_CUDA_CHECK_LAUNCH();
  inv_norm_kernel<<<1, kThreads, 0, s>>>(part, kNormBlocks, inv);
  TREX_CUDA_CHECK_LAUNCH();
  scale_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, n, inv);
  TREX_CUDA_CHECK_LAUNCH();

  float* cur = x;
  float* next = y;
  for (int step = 0; step < steps; ++step) {
    const NsCoefficients k = newton_schulz_coefficients(step);
    const void* xo = cur;  // the operands as the products read them
    if (bf16) {
      round_to_bf16(cur, x16, n, s);
      xo = x16;
    }
    // A = X X^T on the wide orientation: wide X [r, c] -> X X^T; tall X [rows, r] -> X^T X.
    DeviceGemm ga{};
    if (tall)
      ga = DeviceGemm{true, false, r, r, rows, 1.0f, xo, cols, xo, cols, 0.0f, A, r, type};
    else
      ga = DeviceGemm{false, true, r, r, cols, 1.0f, xo, cols, xo, cols, 0.0f, A, r, type};
    blas.gemm(ga, s);
    // B = b A + c A A
    TREX_CUDA_CHECK(cudaMemcpyAsync(B, A, size_t(r * r) * 4, cudaMemcpyDeviceToDevice, s));
    const void* ao = A;
    if (bf16) {
      round_to_bf16(A, a16, r * r, s);
      ao = a16;
    }
    blas.gemm(DeviceGemm{false, false, r, r, r, float(k.c), ao, r, ao, r, float(k.b), B, r, type}, s);
    // X' = a X + B X (wide), i.e. a X + X B^T for the tall X (its transpose)
    TREX_CUDA_CHECK(cudaMemcpyAsync(next, cur, size_t(n) * 4, cudaMemcpyDeviceToDevice, s));
    const void* bo = B;
    if (bf16) {
      round_to_bf16(B, b16, r * r, s);
      bo = b16;
    }
    if (tall)
      blas.gemm(DeviceGemm{false, true, rows, r, r, 1.0f, xo, cols, bo, r, float(k.a), next, cols, type}, s);
    else
      blas.gemm(DeviceGemm{false, false, r, cols, r, 1.0f, bo, r, xo, cols, float(k.a), next, cols, type}, s);
    std::swap(cur, next);
  }
  if (cur != x) TREX_CUDA_CHECK(cudaMemcpyAsync(x, cur, size_t(n) * 4, cudaMemcpyDeviceToDevice, s));
  scratch.release(mark);  // stream-ordered: later allocations' kernels queue after these on the same stream
}

void muon_update(Blas& blas, float* p, const float* g, float* m, int64_t rows, int64_t cols, double lr,
                 float grad_scale, const MuonSettings& st, GemmType type, uint16_t* p_bf16, DeviceArena& scratch,
                 cudaStream_t s) {
  const int64_t n = rows * cols;
  if (n <= 0) throw Error("muon_update: empty matrix " + std::to_string(rows) + "x" + std::to_string(cols));
  const DeviceArena::Mark mark = scratch.mark();
  float* x = scratch.floats(n);
  momentum_kernel<<<blocks_for(n), kThreads, 0, s>>>(m, g, x, n, float(st.momentum), grad_scale, st.nesterov);
  TREX_CUDA_CHECK_LAUNCH();
  newton_schulz(blas, x, rows, cols, st.ns_steps, type, scratch, s);
  // the CPU's constants: sqrt in double, rounded to float with the scale; decay and lr rounded to float
  const float scale = float(std::sqrt(double(std::max(rows, cols))) * st.scale);
  const float decay = float(1.0 - lr * st.weight_decay);
  apply_kernel<<<blocks_for(n), kThreads, 0, s>>>(p, x, n, decay, float(lr), scale, p_bf16);
  TREX_CUDA_CHECK_LAUNCH();
  scratch.release(mark);
}

}  // namespace trex::cuda
