// The compressor's pooling on the device (compressor.hpp).
//
// ape add: a grid-stride thread per element of Zx (one fp32 add: the CPU's bits).
// Forward: a thread per (entry, channel), 128 channels a block (a warp's loads of one slot are 32 consecutive
// columns of one token row): the slots' max, then exp(z - max) written to S and summed in slot order, then
// S / sum written back and pooled = Σ S Cx in slot order — nn::compressor_pool_forward's steps with expf. The
// empty slots of a CSA block 0 are written 0, so S is fully written.
// Backward: dCx and dZx zeroed (cudaMemsetAsync: the tokens past a document's last complete block, and a CSA
// document's last block's columns [0, cdim), are read by no entry), then a thread per (entry, channel) writes its
// slots' dCx = S g and dZx = S g (Cx - pooled), the CPU's expressions (so the CPU's bits on the same S, pooled).
// No two threads write one element: a (token, column) is a slot of at most one entry. HCA: a document's blocks
// are disjoint. CSA: a token's columns [cdim, 2 cdim) are slots of the entry whose block holds it, its columns
// [0, cdim) of the next block's entry only (a block has at most one successor in its document), as the CPU says.
// ape gradient, without atomics: gape[r, j] += Σ_{i : pos[i] % m = r} dZx[i, j] as
//  1. per chunk of kApeGradChunkTokens tokens and 32 columns a block of 32 threads, thread j owning column j of a
//     [m][32] shared accumulator (no other thread touches it: no synchronisation), tokens in increasing order; the
//     chunk's [m, W] partial written to scratch (zeros for the classes absent from it);
//  2. a thread per (class, column): the partials summed in chunk order from 0, then added to gape.
// Every sum has a fixed order for a shape: the same bits on every run.
#include <cuda_runtime.h>

#include <cstdint>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "cuda/compressor.hpp"
#include "cuda/launch.cuh"
#include "util/error.hpp"

namespace trex::cuda {

namespace {
using Pool = DeviceCompressorPool;

constexpr int kChannels = 128;    // forward / backward: channels of one entry per block
constexpr int kApeColumns = 32;   // ape gradient: columns per block, one per thread
constexpr int kThreads = 256;     // grid-stride kernels

// Pool::width() / slots() for device code (the header's are host functions: plain C++ includes it).
__host__ __device__ __forceinline__ int64_t width_of(const Pool& p) { return (p.overlap ? 2 : 1) * p.cdim; }
__host__ __device__ __forceinline__ int64_t slots_of(const Pool& p) { return p.overlap ? 2 * p.m : p.m; }

size_t aligned(size_t b) { return (b + DeviceArena::kAlign - 1) / DeviceArena::kAlign * DeviceArena::kAlign; }

void validate(const Pool& p, const char* what) {
  if (p.N < 0 || p.NE < 0 || p.cdim < 1 || p.m < 1 || p.m > kMaxCompressorRatio || p.NE * p.m > p.N)
    throw Error(fmt::format("{}: unsupported shape N {} NE {} m {} (1 .. {}) cdim {}", what, p.N, p.NE, p.m,
                            kMaxCompressorRatio, p.cdim));
}

int64_t ape_chunks(const Pool& p) { return (p.N + kApeGradChunkTokens - 1) / kApeGradChunkTokens; }

// The [N, W] element slot k of entry (first token s0) reads, channel ch (the slot is not empty).
__device__ __forceinline__ int64_t slot_element(const Pool& p, int64_t s0, int64_t k, int64_t ch) {
  const int64_t m = p.m, W = width_of(p);
  if (p.overlap) return k < m ? (s0 - m + k) * W + ch : (s0 + k - m) * W + p.cdim + ch;
  return (s0 + k) * W + ch;
}
// The first non-empty slot: m for a CSA document's block 0 (no previous block), else 0.
__device__ __forceinline__ int64_t first_slot(const Pool& p, int64_t e) {
  return (p.overlap && !(p.idx[e] > 0)) ? p.m : 0;
}

__global__ void ape_add_kernel(Pool p, const float* __restrict__ ape, float* __restrict__ Zx) {
  const int64_t W = width_of(p), n = p.N * W;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < n; t += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = t / W, j = t - i * W;
    Zx[t] += ape[(p.pos[i] % p.m) * W + j];
  }
}

__global__ void pool_forward_kernel(Pool p, const float* __restrict__ Cx, const float* __restrict__ Zx,
                                    float* __restrict__ S_all, float* __restrict__ pooled) {
  const int64_t e = blockIdx.x, ch = int64_t(blockIdx.y) * kChannels + threadIdx.x;
  if (ch >= p.cdim) return;
  const int64_t cdim = p.cdim, slots = slots_of(p), s0 = p.start[e], first = first_slot(p, e);
  float* S = S_all + e * slots * cdim + ch;  // slot k at S[k * cdim]
  for (int64_t k = 0; k < first; ++k) S[k * cdim] = 0.0f;
  float mx = -INFINITY;
  for (int64_t k = first; k < slots; ++k) mx = fmaxf(mx, Zx[slot_element(p, s0, k, ch)]);
  float sum = 0;
  for (int64_t k = first; k < slots; ++k) {
    const float v = expf(Zx[slot_element(p, s0, k, ch)] - mx);
    S[k * cdim] = v;
    sum += v;
  }
  float acc = 0;
  for (int64_t k = first; k < slots; ++k) {
    const float v = S[k * cdim] / sum;
    S[k * cdim] = v;
    acc += v * Cx[slot_element(p, s0, k, ch)];
  }
  pooled[e * cdim + ch] = acc;
}

__global__ void pool_backward_kernel(Pool p, const float* __restrict__ Cx, const float* __restrict__ S_all,
                                     const float* __restrict__ pooled, const float* __restrict__ dpooled,
                                     float* __restrict__ dCx, float* __restrict__ dZx) {
  const int64_t e = blockIdx.x, ch = int64_t(blockIdx.y) * kChannels + threadIdx.x;
  if (ch >= p.cdim) return;
  const int64_t cdim = p.cdim, slots = slots_of(p), s0 = p.start[e];
  const float g = dpooled[e * cdim + ch], pool = pooled[e * cdim + ch];
  const float* S = S_all + e * slots * cdim + ch;
  for (int64_t k = first_slot(p, e); k < slots; ++k) {
    const int64_t x = slot_element(p, s0, k, ch);
    const float sk = S[k * cdim];
    dCx[x] = sk * g;
    dZx[x] = sk * g * (Cx[x] - pool);
  }
}

// Step 1 of the ape gradient: partial [chunks, m, W].
__global__ void ape_partial_kernel(Pool p, const float* __restrict__ dZx, float* __restrict__ partial) {
  extern __shared__ float acc_all[];  // [m][kApeColumns]; thread t owns column t
  const int64_t chunk = blockIdx.x, j = int64_t(blockIdx.y) * kApeColumns + threadIdx.x, m = p.m, W = width_of(p);
  if (j >= W) return;
  float* acc = acc_all + threadIdx.x;
  for (int64_t r = 0; r < m; ++r) acc[r * kApeColumns] = 0.0f;
  const int64_t i0 = chunk * kApeGradChunkTokens, i1 = min(p.N, i0 + kApeGradChunkTokens);
  for (int64_t i = i0; i < i1; ++i) acc[(p.pos[i] % m) * kApeColumns] += dZx[i * W + j];
  float* out = partial + chunk * m * W + j;
  for (int64_t r = 0; r < m; ++r) out[r * W] = acc[r * kApeColumns];
}

// Step 2: gape [m, W] += the chunk partials summed in chunk order.
__global__ void ape_sum_kernel(const float* __restrict__ partial, float* __restrict__ gape, int64_t mW,
                               int64_t chunks) {
  for (int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; x < mW; x += int64_t(gridDim.x) * blockDim.x) {
    float s = 0;
    for (int64_t c = 0; c < chunks; ++c) s += partial[c * mW + x];
    gape[x] += s;
  }
}
}  // namespace

void compressor_ape_add(const DeviceCompressorPool& p, const float* ape, float* Zx, cudaStream_t s) {
  validate(p, "compressor_ape_add");
  if (p.N == 0) return;
  ape_add_kernel<<<detail::grid_stride_blocks(p.N * width_of(p), kThreads), kThreads, 0, s>>>(p, ape, Zx);
  TREX_CUDA_CHECK_LAUNCH();
}

void compressor_pool_forward(const DeviceCompressorPool& p, const float* Cx, const float* Zx, float* S,
                             float* pooled, cudaStream_t s) {
  validate(p, "compressor_pool_forward");
  if (p.NE == 0) return;
  const dim3 grid(unsigned(p.NE), unsigned((p.cdim + kChannels - 1) / kChannels));
  pool_forward_kernel<<<grid, kChannels, 0, s>>>(p, Cx, Zx, S, pooled);
  TREX_CUDA_CHECK_LAUNCH();
}

void compressor_pool_backward(const DeviceCompressorPool& p, const float* Cx, const float* S, const float* pooled,
                              const float* dpooled, float* dCx, float* dZx, cudaStream_t s) {
  validate(p, "compressor_pool_backward");
  if (p.N == 0) return;
  const size_t bytes = size_t(p.N * width_of(p)) * sizeof(float);
  TREX_CUDA_CHECK(cudaMemsetAsync(dCx, 0, bytes, s));
  TREX_CUDA_CHECK(cudaMemsetAsync(dZx, 0, bytes, s));
  if (p.NE == 0) return;
  const dim3 grid(unsigned(p.NE), unsigned((p.cdim + kChannels - 1) / kChannels));
  pool_backward_kernel<<<grid, kChannels, 0, s>>>(p, Cx, S, pooled, dpooled, dCx, dZx);
  TREX_CUDA_CHECK_LAUNCH();
}

size_t compressor_ape_backward_scratch_bytes(const DeviceCompressorPool& p) {
  return aligned(size_t(ape_chunks(p) * p.m * width_of(p)) * sizeof(float));
}

void compressor_ape_backward(const DeviceCompressorPool& p, const float* dZx, float* gape, DeviceArena& scratch,
                             cudaStream_t s) {
  validate(p, "compressor_ape_backward");
  if (p.N == 0) return;
  const DeviceArena::Mark mark = scratch.mark();
  const int64_t chunks = ape_chunks(p), W = width_of(p), mW = p.m * W;
  float* partial = scratch.floats(chunks * mW);
  const size_t smem = size_t(p.m * kApeColumns) * sizeof(float);  // <= 48 KB: m <= kMaxCompressorRatio
  const dim3 grid(unsigned(chunks), unsigned((W + kApeColumns - 1) / kApeColumns));
  ape_partial_kernel<<<grid, kApeColumns, smem, s>>>(p, dZx, partial);
  TREX_CUDA_CHECK_LAUNCH();
  ape_sum_kernel<<<detail::grid_stride_blocks(mW, kThreads), kThreads, 0, s>>>(partial, gape, mW, chunks);
  TREX_CUDA_CHECK_LAUNCH();
  scratch.release(mark);  // stream-ordered: a later allocation's kernels queue after these on the same stream
}

}  // namespace trex::cuda
