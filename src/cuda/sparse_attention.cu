// The joint-softmax attention core on the device (sparse_attention.hpp), forward and backward.
//
// Forward, one 256-thread block per (query i, group of hg heads): the group's q rows in shared memory, the query's
// keys (window rows, then its compressed entries in list order) staged 16 at a time through shared memory; pass 1
// writes every logit l = scale q · k into shared memory (a warp per (head, key), lanes over head_dim), the softmax
// runs a warp per head (max, then exp and the sum, the sink's exp added after the lanes' sum, P = exp / sum written
// out), pass 2 streams the keys again for o = Σ_e P_e k_e (each thread owns up to 16 (head, column) accumulators).
//
// Backward, without atomics:
//  1. per (query, head group), the forward's structure: g · o, g · k_e, then dl_e = P_e (g · k_e - g · o) scale;
//     dq = Σ_e dl_e k_e directly; (dl_e, P_e) written to a scratch coefficient array laid out [N][kmax][H][2] (a
//     key's H heads contiguous) and -(1 - Σ_e P_e) g · o to a scratch [N, H] for the sink;
//  2. dkv, key-major: a block per (16 kv rows, 128 columns) sums, for each row j, over the queries whose window
//     contains it (i = j .. j + w - 1 with ws[i] <= j: a contiguous range) in increasing query order, each query's
//     heads in increasing order, the terms dl q_ih + P g_ih;
//  3. dC the same way over inverse lists: for each tile of 16 entries the (query, slot) pairs that list one of its
//     entries, in increasing query order and each query's slots in list order — built by two deterministic passes
//     over comp (count per tile, a sequential scan of the tile counts, fill; warp ballots give the positions), so
//     entry c's terms come in increasing query order, heads in order within a query;
//  4. dsink[h]: the [N, H] scratch summed per head by one block (strided partials, then the fixed block tree).
// Every sum has a fixed order for a given shape and lists: the same bits on every run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "cuda/inverse_lists.cuh"
#include "cuda/reduce.cuh"
#include "cuda/sparse_attention.hpp"
#include "util/error.hpp"

namespace trex::cuda {

namespace {
constexpr int kThreads = 256;                  // query kernels: 8 warps
constexpr int kWarps = kThreads / 32;
constexpr int kKeyTile = 16;                   // keys staged in shared memory at a time (query kernels)
constexpr int kAccPerThread = 16;              // o / dq accumulators per thread: hg * hd <= kThreads * 16
constexpr int kMaxHeadsPerBlock = 16;
constexpr int kGradTile = 16;                  // key rows (kv rows or entries) per key-gradient block
constexpr int kGradDims = 128;                 // head_dim columns per key-gradient block, one per thread
constexpr size_t kMaxSmem = size_t(200) << 10;  // under the H200's 227 KB per block

using Args = DeviceSparseAttention;

struct QueryGeometry {
  int hg = 1;       // heads per block
  size_t smem = 0;  // dynamic shared memory per block
};
// rows_per_kmax: the [hg, kmax] arrays a query kernel keeps (forward: logits; backward: dl and P)
QueryGeometry query_geometry(const Args& a, int rows_per_kmax) {
  const int64_t kmax = a.kmax();
  auto bytes = [&](int64_t hg) {
    return size_t(hg * a.hd + kKeyTile * a.hd + rows_per_kmax * hg * kmax + hg) * sizeof(float);
  };
  int64_t hg = std::min<int64_t>({a.H, kMaxHeadsPerBlock, kThreads * kAccPerThread / a.hd});
  while (hg > 1 && bytes(hg) > kMaxSmem) --hg;
  if (bytes(hg) > kMaxSmem)
    throw Error(fmt::format("sparse attention: kmax {} with head_dim {} needs {} KB of shared memory per block "
                            "(at most {} KB)", kmax, a.hd, bytes(hg) >> 10, kMaxSmem >> 10));
  return QueryGeometry{int(hg), bytes(hg)};
}

void validate(const Args& a, const char* what) {
  if (a.N <= 0 || a.H <= 0 || a.hd <= 0 || a.hd > kMaxAttentionHeadDim || a.window <= 0 || a.cmax < 0 || a.NE < 0)
    throw Error(fmt::format("{}: unsupported shape N {} H {} head_dim {} (1 .. {}) window {} NE {} cmax {}", what,
                            a.N, a.H, a.hd, kMaxAttentionHeadDim, a.window, a.NE, a.cmax));
  if (a.N * a.kmax() >= (int64_t(1) << 31))
    throw Error(fmt::format("{}: N * kmax = {} must stay under 2^31 (int32 pair indices)", what, a.N * a.kmax()));
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// key e of query i: window rows first (e < nw), then the compressed entries in list order
__device__ __forceinline__ const float* key_row(const Args& a, const int32_t* comp_i, int64_t ws, int64_t nw,
                                                int64_t e) {
  return e < nw ? a.kv + (ws + e) * a.hd : a.C + int64_t(comp_i[e - nw]) * a.hd;
}

// keys k0 .. k0 + tk of query i into ks [tk, hd]
__device__ void load_keys(const Args& a, const int32_t* comp_i, int64_t ws, int64_t nw, int64_t k0, int tk,
                          float* ks) {
  const int64_t hd = a.hd;
  for (int64_t idx = threadIdx.x; idx < tk * hd; idx += blockDim.x) {
    const int64_t kk = idx / hd, j = idx - kk * hd;
    ks[idx] = key_row(a, comp_i, ws, nw, k0 + kk)[j];
  }
}

// out[hh * kmax + k0 + kk] = scale * (rows[hh] · ks[kk]) for hh < hg, kk < tk: a warp per pair, each lane summing
// columns lane, lane + 32, ... in order, then the xor-shuffle tree
__device__ void tile_dots(const float* rows, const float* ks, int hg, int tk, int64_t hd, float scale, float* out,
                          int64_t kmax, int64_t k0) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int pair = warp; pair < hg * tk; pair += kWarps) {
    const int hh = pair / tk, kk = pair - hh * tk;
    float s = 0;
    for (int64_t j = lane; j < hd; j += 32) s += rows[hh * hd + j] * ks[kk * hd + j];
    s = warp_sum(s);
    if (lane == 0) out[hh * kmax + k0 + kk] = s * scale;
  }
}

// acc[r] += Σ_kk coef[hh * kmax + k0 + kk] ks[kk][j] in key order, for this thread's (head, column) elements
// p = threadIdx.x + r kThreads (hh = p / hd, j = p % hd)
__device__ void tile_axpy(const float* coef, const float* ks, int hg, int tk, int64_t hd, int64_t kmax, int64_t k0,
                          float (&acc)[kAccPerThread]) {
#pragma unroll
  for (int r = 0; r < kAccPerThread; ++r) {
    const int64_t p = threadIdx.x + int64_t(r) * kThreads;
    if (p < hg * hd) {
      const int64_t hh = p / hd, j = p - hh * hd;
      float v = acc[r];
      for (int kk = 0; kk < tk; ++kk) v += coef[hh * kmax + k0 + kk] * ks[kk * hd + j];
      acc[r] = v;
    }
  }
}

// Pass 1 of a query kernel: out[hh * kmax + e] = scale * (rows[hh] · k_e) for the query's nk keys, tile by tile
// through ks. Starts and ends with a barrier (rows may have just been written; out is then read by every thread).
__device__ void dots_over_keys(const Args& a, const int32_t* comp_i, int64_t ws, int64_t nw, int64_t nk,
                               const float* rows, int hg, float scale, float* ks, float* out, int64_t kmax) {
  for (int64_t k0 = 0; k0 < nk; k0 += kKeyTile) {
    const int tk = int(nk - k0 < kKeyTile ? nk - k0 : kKeyTile);
    __syncthreads();  // rows written / the previous tile consumed
    load_keys(a, comp_i, ws, nw, k0, tk, ks);
    __syncthreads();
    tile_dots(rows, ks, hg, tk, a.hd, scale, out, kmax, k0);
  }
  __syncthreads();
}

// Pass 2 of a query kernel: out[hh * hd + j] = Σ_e coef[hh * kmax + e] k_e[j] in key order (o from P, dq from dl),
// each thread's (head, column) elements in registers, the keys streamed through ks again.
__device__ void axpy_over_keys(const Args& a, const int32_t* comp_i, int64_t ws, int64_t nw, int64_t nk,
                               const float* coef, int hg, float* ks, int64_t kmax, float* out) {
  float acc[kAccPerThread] = {};
  for (int64_t k0 = 0; k0 < nk; k0 += kKeyTile) {
    const int tk = int(nk - k0 < kKeyTile ? nk - k0 : kKeyTile);
    __syncthreads();  // coefficients written / the previous tile consumed
    load_keys(a, comp_i, ws, nw, k0, tk, ks);
    __syncthreads();
    tile_axpy(coef, ks, hg, tk, a.hd, kmax, k0, acc);
  }
#pragma unroll
  for (int r = 0; r < kAccPerThread; ++r) {
    const int64_t p = threadIdx.x + int64_t(r) * kThreads;
    if (p < hg * a.hd) out[p] = acc[r];
  }
}

__global__ void __launch_bounds__(kThreads) attn_fwd_kernel(Args a, float* __restrict__ P, float* __restrict__ o,
                                                            int hg_max) {
  extern __shared__ float smem[];
  const int64_t i = blockIdx.x, H = a.H, hd = a.hd, kmax = a.window + a.cmax;
  const int64_t h0 = int64_t(blockIdx.y) * hg_max;
  const int hg = int(H - h0 < hg_max ? H - h0 : hg_max);
  float* qs = smem;                   // [hg, hd]
  float* ks = qs + hg_max * hd;       // [kKeyTile, hd]
  float* ls = ks + kKeyTile * hd;     // [hg, kmax]: logits, then probabilities
  const int64_t ws = a.ws[i], nw = i - ws + 1, nk = nw + a.ncomp[i];
  const int32_t* comp_i = a.comp + i * a.cmax;
  for (int64_t idx = threadIdx.x; idx < hg * hd; idx += blockDim.x) qs[idx] = a.q[(i * H + h0) * hd + idx];
  dots_over_keys(a, comp_i, ws, nw, nk, qs, hg, a.scale, ks, ls, kmax);  // pass 1: logits
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int hh = warp; hh < hg; hh += kWarps) {  // softmax, a warp per head; the sink joins the denominator only
    float* l = ls + hh * kmax;
    const float sink = a.sink[h0 + hh];
    float mx = sink;
    for (int64_t e = lane; e < nk; e += 32) mx = fmaxf(mx, l[e]);
    mx = warp_max(mx);
    float sum = 0;
    for (int64_t e = lane; e < nk; e += 32) {
      const float v = expf(l[e] - mx);
      l[e] = v;
      sum += v;
    }
    sum = warp_sum(sum) + expf(sink - mx);
    float* prow = P + (i * H + h0 + hh) * kmax;
    for (int64_t e = lane; e < nk; e += 32) {
      const float p = l[e] / sum;
      l[e] = p;
      prow[e] = p;
    }
  }
  axpy_over_keys(a, comp_i, ws, nw, nk, ls, hg, ks, kmax, o + (i * H + h0) * hd);  // pass 2: o = Σ P k
}

__global__ void __launch_bounds__(kThreads)
    attn_bwd_query_kernel(Args a, const float* __restrict__ P, const float* __restrict__ o,
                          const float* __restrict__ g, float* __restrict__ dq, float* __restrict__ coef,
                          float* __restrict__ sink_part, int hg_max) {
  extern __shared__ float smem[];
  const int64_t i = blockIdx.x, H = a.H, hd = a.hd, kmax = a.window + a.cmax;
  const int64_t h0 = int64_t(blockIdx.y) * hg_max;
  const int hg = int(H - h0 < hg_max ? H - h0 : hg_max);
  float* gs = smem;                   // [hg, hd]
  float* ks = gs + hg_max * hd;       // [kKeyTile, hd]
  float* cs = ks + kKeyTile * hd;     // [hg, kmax]: g · k, then dl
  float* ps = cs + hg_max * kmax;     // [hg, kmax]: P
  float* gos = ps + hg_max * kmax;    // [hg]: g · o
  const int64_t ws = a.ws[i], nw = i - ws + 1, nk = nw + a.ncomp[i];
  const int32_t* comp_i = a.comp + i * a.cmax;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int64_t idx = threadIdx.x; idx < hg * hd; idx += blockDim.x) gs[idx] = g[(i * H + h0) * hd + idx];
  __syncthreads();
  for (int hh = warp; hh < hg; hh += kWarps) {
    const float* orow = o + (i * H + h0 + hh) * hd;
    float s = 0;
    for (int64_t j = lane; j < hd; j += 32) s += gs[hh * hd + j] * orow[j];
    s = warp_sum(s);
    if (lane == 0) gos[hh] = s;
  }
  dots_over_keys(a, comp_i, ws, nw, nk, gs, hg, 1.0f, ks, cs, kmax);  // pass 1: g · k
  for (int hh = warp; hh < hg; hh += kWarps) {  // dl = P (g · k - g · o) scale; the sink's share 1 - Σ P
    const float go = gos[hh];
    const float* prow = P + (i * H + h0 + hh) * kmax;
    float psum = 0;
    for (int64_t e = lane; e < nk; e += 32) {
      const float p = prow[e];
      cs[hh * kmax + e] = p * (cs[hh * kmax + e] - go) * a.scale;
      ps[hh * kmax + e] = p;
      psum += p;
    }
    psum = warp_sum(psum);
    if (lane == 0) sink_part[i * H + h0 + hh] = -(1.0f - psum) * go;
  }
  __syncthreads();
  // the coefficient rows of the key gradients, [i][e][h][dl, p]: runs of 2 hg floats per key
  for (int64_t idx = threadIdx.x; idx < nk * hg * 2; idx += blockDim.x) {
    const int64_t e = idx / (2 * hg), r = idx - e * 2 * hg, hh = r >> 1;
    coef[((i * kmax + e) * H + h0 + hh) * 2 + (r & 1)] = (r & 1) ? ps[hh * kmax + e] : cs[hh * kmax + e];
  }
  axpy_over_keys(a, comp_i, ws, nw, nk, cs, hg, ks, kmax, dq + (i * H + h0) * hd);  // pass 2: dq = Σ dl k
}

// One chunk of n <= kGradTile (query i, key) pairs staged in shared memory (slot_s: the key's row in the block's
// tile; coef_s: its H (dl, p) pairs) added into this thread's column: heads in order, pairs in order.
__device__ void add_chunk(const Args& a, const float* g, int64_t i, int n, const int* slot_s, const float* coef_s,
                          float* acc_s, int64_t j) {
  if (j >= a.hd) return;
  const int64_t H = a.H, hd = a.hd;
  for (int64_t h = 0; h < H; ++h) {
    const float qv = a.q[(i * H + h) * hd + j], gv = g[(i * H + h) * hd + j];
    for (int pc = 0; pc < n; ++pc) {
      float* acc = acc_s + slot_s[pc] * kGradDims + threadIdx.x;
      *acc += coef_s[(pc * H + h) * 2] * qv + coef_s[(pc * H + h) * 2 + 1] * gv;  // key role + value role
    }
  }
}

// dkv: block (blockIdx.x: kv rows r0 .. r0 + 15, blockIdx.y: 128 columns); the queries i = r0 .. r0 + 15 + w - 1
// in order, each contributing its window keys inside the tile (a contiguous run of its key list).
__global__ void __launch_bounds__(kGradDims)
    window_grad_kernel(Args a, const float* __restrict__ g, const float* __restrict__ coef, float* __restrict__ dkv) {
  extern __shared__ float smem[];
  float* acc_s = smem;                          // [kGradTile, kGradDims]
  float* coef_s = acc_s + kGradTile * kGradDims;  // [kGradTile, H, 2]
  __shared__ int slot_s[kGradTile];
  const int64_t N = a.N, H = a.H, hd = a.hd, kmax = a.window + a.cmax, r0 = int64_t(blockIdx.x) * kGradTile;
  const int64_t j = int64_t(blockIdx.y) * kGradDims + threadIdx.x;
  for (int kk = 0; kk < kGradTile; ++kk) acc_s[kk * kGradDims + threadIdx.x] = 0;
  const int64_t i_end = r0 + kGradTile - 1 + a.window < N ? r0 + kGradTile - 1 + a.window : N;
  for (int64_t i = r0; i < i_end; ++i) {
    const int64_t ws = a.ws[i], lo = ws > r0 ? ws : r0, hi = i < r0 + kGradTile - 1 ? i : r0 + kGradTile - 1;
    if (lo > hi) continue;  // the same for every thread
    const int n = int(hi - lo + 1);
    const float* src = coef + (i * kmax + (lo - ws)) * H * 2;  // keys lo .. hi: contiguous coefficient rows
    __syncthreads();  // the previous chunk is consumed
    for (int64_t idx = threadIdx.x; idx < n * H * 2; idx += blockDim.x) coef_s[idx] = src[idx];
    if (threadIdx.x < n) slot_s[threadIdx.x] = int(lo - r0) + int(threadIdx.x);
    __syncthreads();
    add_chunk(a, g, i, n, slot_s, coef_s, acc_s, j);
  }
  if (j < hd)
    for (int kk = 0; kk < kGradTile && r0 + kk < N; ++kk) dkv[(r0 + kk) * hd + j] = acc_s[kk * kGradDims + threadIdx.x];
}

// The inverse lists of the compressed entries, per tile of kGradTile entries (inverse_lists.cuh): the pairs (query
// i, key index e) of every query listing an entry of the tile, as i * kmax + e (window keys first in P's row).
struct EntryLists {
  Args a;
  __device__ int64_t length(int64_t i) const { return a.ncomp[i]; }
  __device__ const int32_t* entries(int64_t i) const { return a.comp + i * a.cmax; }
  __device__ int64_t pair(int64_t i, int64_t s) const { return i * (a.window + a.cmax) + (i - a.ws[i] + 1) + s; }
};

// dC: block (blockIdx.x: entries c0 .. c0 + 15, blockIdx.y: 128 columns) over the tile's inverse list, a query's
// pairs (at most kGradTile at a time) as one chunk.
__global__ void __launch_bounds__(kGradDims)
    entry_grad_kernel(Args a, const float* __restrict__ g, const float* __restrict__ coef,
                      const int32_t* __restrict__ pairs, const int32_t* __restrict__ tile_start,
                      float* __restrict__ dC) {
  extern __shared__ float smem[];
  float* acc_s = smem;                            // [kGradTile, kGradDims]
  float* coef_s = acc_s + kGradTile * kGradDims;  // [kGradTile, H, 2]
  __shared__ int slot_s[kGradTile];
  __shared__ int n_s;
  const int64_t H = a.H, hd = a.hd, kmax = a.window + a.cmax, c0 = int64_t(blockIdx.x) * kGradTile;
  const int64_t j = int64_t(blockIdx.y) * kGradDims + threadIdx.x;
  for (int kk = 0; kk < kGradTile; ++kk) acc_s[kk * kGradDims + threadIdx.x] = 0;
  const int64_t end = tile_start[blockIdx.x + 1];
  for (int64_t p = tile_start[blockIdx.x]; p < end;) {
    const int64_t i = pairs[p] / kmax;
    __syncthreads();  // the previous chunk is consumed
    if (threadIdx.x == 0) {
      int n = 0;
      while (n < kGradTile && p + n < end && pairs[p + n] / kmax == i) ++n;
      n_s = n;
    }
    __syncthreads();
    const int n = n_s;
    const int64_t nw = i - a.ws[i] + 1;
    for (int64_t idx = threadIdx.x; idx < n * H * 2; idx += blockDim.x) {
      const int64_t pc = idx / (2 * H), e = pairs[p + pc] - i * kmax;
      coef_s[idx] = coef[(i * kmax + e) * H * 2 + (idx - pc * 2 * H)];
    }
    if (threadIdx.x < n) slot_s[threadIdx.x] = int(a.comp[i * a.cmax + (pairs[p + threadIdx.x] - i * kmax) - nw] - c0);
    __syncthreads();
    add_chunk(a, g, i, n, slot_s, coef_s, acc_s, j);
    p += n;
  }
  if (j < hd)
    for (int kk = 0; kk < kGradTile && c0 + kk < a.NE; ++kk)
      dC[(c0 + kk) * hd + j] = acc_s[kk * kGradDims + threadIdx.x];
}

// dsink[h] = Σ_i sink_part[i, h]: strided per-thread partials in index order, then the block tree
__global__ void sink_sum_kernel(const float* __restrict__ sink_part, float* __restrict__ dsink, int64_t N,
                                int64_t H) {
  const int64_t h = blockIdx.x;
  float s = 0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) s += sink_part[i * H + h];
  s = detail::block_reduce(s, detail::Sum{}, 0.0f);
  if (threadIdx.x == 0) dsink[h] = s;
}

size_t aligned(size_t bytes) { return (bytes + DeviceArena::kAlign - 1) / DeviceArena::kAlign * DeviceArena::kAlign; }
int64_t entry_tiles(const Args& a) { return (a.NE + kGradTile - 1) / kGradTile; }
bool has_entry_lists(const Args& a) { return a.NE > 0 && a.cmax > 0; }
}  // namespace

void sparse_attention_forward(const DeviceSparseAttention& a, float* P, float* o, cudaStream_t s) {
  validate(a, "sparse_attention_forward");
  const QueryGeometry geo = query_geometry(a, 1);
  TREX_CUDA_CHECK(cudaFuncSetAttribute(attn_fwd_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(geo.smem)));
  const dim3 grid(unsigned(a.N), unsigned((a.H + geo.hg - 1) / geo.hg));
  attn_fwd_kernel<<<grid, kThreads, geo.smem, s>>>(a, P, o, geo.hg);
  TREX_CUDA_CHECK_LAUNCH();
}

size_t sparse_attention_backward_scratch_bytes(const DeviceSparseAttention& a) {
  size_t b = aligned(size_t(a.N * a.kmax() * a.H * 2) * sizeof(float)) + aligned(size_t(a.N * a.H) * sizeof(float));
  if (has_entry_lists(a)) {
    const int64_t tiles = entry_tiles(a);
    b += aligned(size_t(tiles) * 4) + aligned(size_t(tiles + 1) * 4) + aligned(size_t(a.N * a.cmax) * 4);
  }
  return b;
}

void sparse_attention_backward(const DeviceSparseAttention& a, const float* P, const float* o, const float* g,
                               float* dq, float* dkv, float* dC, float* dsink, DeviceArena& scratch,
                               cudaStream_t s) {
  validate(a, "sparse_attention_backward");
  const DeviceArena::Mark mark = scratch.mark();
  const int64_t kmax = a.kmax();
  float* coef = scratch.floats(a.N * kmax * a.H * 2);
  float* sink_part = scratch.floats(a.N * a.H);
  // 1. per query: dq, the coefficients, the sink's shares
  const QueryGeometry geo = query_geometry(a, 2);
  TREX_CUDA_CHECK(
      cudaFuncSetAttribute(attn_bwd_query_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(geo.smem)));
  attn_bwd_query_kernel<<<dim3(unsigned(a.N), unsigned((a.H + geo.hg - 1) / geo.hg)), kThreads, geo.smem, s>>>(
      a, P, o, g, dq, coef, sink_part, geo.hg);
  TREX_CUDA_CHECK_LAUNCH();
  // 2. dkv, key-major over the windows
  const unsigned col_blocks = unsigned((a.hd + kGradDims - 1) / kGradDims);
  const size_t grad_smem = size_t(kGradTile * kGradDims + kGradTile * a.H * 2) * sizeof(float);
  TREX_CUDA_CHECK(
      cudaFuncSetAttribute(window_grad_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(grad_smem)));
  window_grad_kernel<<<dim3(unsigned((a.N + kGradTile - 1) / kGradTile), col_blocks), kGradDims, grad_smem, s>>>(
      a, g, coef, dkv);
  TREX_CUDA_CHECK_LAUNCH();
  // 3. dC over the inverse lists
  if (has_entry_lists(a)) {
    const int64_t tiles = entry_tiles(a);
    int32_t* tile_count = scratch.ints(tiles);
    int32_t* tile_start = scratch.ints(tiles + 1);
    int32_t* pairs = scratch.ints(a.N * a.cmax);
    build_inverse_lists(EntryLists{a}, a.N, tiles, kGradTile, tile_count, tile_start, pairs, s);
    TREX_CUDA_CHECK(
        cudaFuncSetAttribute(entry_grad_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(grad_smem)));
    entry_grad_kernel<<<dim3(unsigned(tiles), col_blocks), kGradDims, grad_smem, s>>>(a, g, coef, pairs, tile_start,
                                                                                       dC);
    TREX_CUDA_CHECK_LAUNCH();
  } else if (a.NE > 0) {
    TREX_CUDA_CHECK(cudaMemsetAsync(dC, 0, size_t(a.NE * a.hd) * sizeof(float), s));  // no query lists an entry
  }
  // 4. the sink
  sink_sum_kernel<<<unsigned(a.H), kThreads, 0, s>>>(sink_part, dsink, a.N, a.H);
  TREX_CUDA_CHECK_LAUNCH();
  scratch.release(mark);  // stream-ordered: a later allocation's kernels queue after these on the same stream
}

}  // namespace trex::cuda
