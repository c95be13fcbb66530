// The lightning indexer's scores and KL loss on the device (indexer.hpp).
//
// Scores, a 256-thread block per query: its qI row [HI, cI] and lam in shared memory, its visible entries staged 16
// at a time; a warp per (entry, head) dot (lanes over cI in strided order, then the xor butterfly), then a thread
// per entry sums lam_h relu(dot) over the heads in increasing order (the CPU's order).
//
// KL, without atomics:
//  1. a block per query: the main distribution Pt_e = Σ_h softmax_e(q_h · Ce_e / sqrt(hd)) over all nv visible
//     entries, heads in groups held in shared memory; per group two passes over the entries staged 16 at a time: a
//     warp per (entry, head) logit, pass 1 an online max / sum per head (a thread per head, entries in order), pass 2
//     Pt_e += exp(l - m_h) / s_h (a thread per entry, heads in order). Then over the selected entries (a thread per
//     slot j, strided): psum, max I and Σ exp(I - max) by the fixed block tree (reduce.cuh), p_j, pi_j, the KL terms
//     (double, the block tree gives row_loss[i]), gpi_j = -coeff (p_j + eps) / (pi_j + eps), Σ pi gpi, and
//     dI_j = pi_j (gpi_j - Σ pi gpi) written to a scratch [N, kstride] (0 past the query's slots);
//  2. a block per query: dlam_h = Σ_j [qk > 0] dI_j qk (a thread per head, slots in order) and
//     dqI_h = Σ_j [qk > 0] (dI_j lam_h) K_j (a thread per (head, column), up to 32 accumulators, slots in order);
//  3. dK over inverse lists: for each tile of 16 entries the (query, slot) pairs that select one of them, queries in
//     increasing order (count per tile, a sequential scan, fill; warp ballots give the positions: the approach of
//     sparse_attention.cu's dC lists); a block per tile walks them a query at a time (its qI row staged once for its
//     pairs in the tile), recomputes qk per (pair, head) and adds [qk > 0] (dI lam_h) qI_h to the entry's row,
//     heads in increasing order.
// Every sum has a fixed order for a given shape and lists: the same bits on every run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "cuda/indexer.hpp"
#include "cuda/inverse_lists.cuh"
#include "cuda/reduce.cuh"
#include "util/error.hpp"

namespace trex::cuda {

namespace {
constexpr int kThreads = 256;  // query kernels: 8 warps
constexpr int kWarps = kThreads / 32;
constexpr int kTile = 16;      // entries staged in shared memory at a time; entries per dK block
constexpr int kAcc = int(kMaxIndexerRow / kThreads);  // dqI accumulators per thread
constexpr int kGradThreads = 128;                      // dK blocks: 4 warps, threads over the cI columns
constexpr size_t kMaxSmem = size_t(200) << 10;         // under the H200's 227 KB per block
constexpr float kEps = 1e-10f;                         // nn::indexer_kl's eps

size_t aligned(size_t bytes) { return (bytes + DeviceArena::kAlign - 1) / DeviceArena::kAlign * DeviceArena::kAlign; }

// lanes over n in strided order, then the xor butterfly: every lane gets the same bits
__device__ __forceinline__ float warp_dot(const float* a, const float* b, int64_t n, int lane) {
  float s = 0;
  for (int64_t t = lane; t < n; t += 32) s += a[t] * b[t];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  return s;
}

// ------------------------------------------------------------------ scores
__global__ void __launch_bounds__(kThreads) scores_kernel(DeviceIndexer ix, float* __restrict__ scores) {
  extern __shared__ float smem[];
  const int64_t HI = ix.HI, cI = ix.cI, i = blockIdx.x;
  float* q_s = smem;                   // [HI, cI]
  float* k_s = q_s + HI * cI;          // [kTile, cI]
  float* d_s = k_s + kTile * cI;       // [kTile, HI]
  float* lam_s = d_s + kTile * HI;     // [HI]
  const int64_t nv = ix.nvis[i], base = ix.base[i];
  if (nv == 0) return;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int64_t t = threadIdx.x; t < HI * cI; t += blockDim.x) q_s[t] = ix.qI[i * HI * cI + t];
  for (int64_t h = threadIdx.x; h < HI; h += blockDim.x) lam_s[h] = ix.lam[i * HI + h];
  for (int64_t e0 = 0; e0 < nv; e0 += kTile) {
    const int64_t nt = min(int64_t(kTile), nv - e0);
    __syncthreads();  // the previous tile is consumed
    for (int64_t t = threadIdx.x; t < nt * cI; t += blockDim.x) k_s[t] = ix.K[(base + e0) * cI + t];
    __syncthreads();
    for (int64_t pr = warp; pr < nt * HI; pr += kWarps) {
      const int64_t e = pr / HI, h = pr - e * HI;
      const float d = warp_dot(q_s + h * cI, k_s + e * cI, cI, lane);
      if (lane == 0) d_s[e * HI + h] = d;
    }
    __syncthreads();
    if (threadIdx.x < nt) {
      float acc = 0;
      for (int64_t h = 0; h < HI; ++h) acc += lam_s[h] * fmaxf(d_s[threadIdx.x * HI + h], 0.0f);  // ReLU, then lam
      scores[i * ix.smax + e0 + threadIdx.x] = acc;
    }
  }
}

__global__ void dense_sel_kernel(DeviceIndexer ix, int32_t* __restrict__ sel) {
  const int64_t i = blockIdx.x, nv = ix.nvis[i], base = ix.base[i];
  for (int64_t e = threadIdx.x; e < ix.smax; e += blockDim.x) sel[i * ix.smax + e] = e < nv ? int32_t(base + e) : -1;
}

// ------------------------------------------------------------------ KL, per query
struct KlGeometry {
  int hg = 1;       // main heads per group
  size_t smem = 0;
};
size_t kl_forward_smem(const DeviceIndexer& ix, const DeviceIndexerKL& kl, int64_t hg) {
  return size_t(hg * kl.hd + kTile * kl.hd + hg * kTile + 2 * hg + ix.smax + 2 * kl.kstride) * sizeof(float);
}
KlGeometry kl_geometry(const DeviceIndexer& ix, const DeviceIndexerKL& kl) {
  int64_t hg = std::min<int64_t>(kl.H, 64);
  while (hg > 1 && kl_forward_smem(ix, kl, hg) > kMaxSmem) --hg;
  return KlGeometry{int(hg), kl_forward_smem(ix, kl, hg)};
}

__global__ void __launch_bounds__(kThreads)
    kl_forward_kernel(DeviceIndexer ix, DeviceIndexerKL kl, const float* __restrict__ scores,
                      double* __restrict__ row_loss, float* __restrict__ coef, int hg) {
  extern __shared__ float smem[];
  const int64_t H = kl.H, hd = kl.hd, i = blockIdx.x, ks = kl.kstride;
  float* q_s = smem;                 // [hg, hd]
  float* c_s = q_s + hg * hd;        // [kTile, hd]
  float* l_s = c_s + kTile * hd;     // [hg, kTile]
  float* m_s = l_s + hg * kTile;     // [hg] running max
  float* s_s = m_s + hg;             // [hg] running sum
  float* Pt = s_s + hg;              // [smax]
  float* pi_s = Pt + ix.smax;        // [kstride]
  float* gpi_s = pi_s + ks;          // [kstride]
  const int64_t nv = ix.nvis[i], base = ix.base[i], kt = min(ks, nv);
  if (nv == 0) {
    for (int64_t j = threadIdx.x; j < ks; j += blockDim.x) coef[i * ks + j] = 0;
    if (threadIdx.x == 0) row_loss[i] = 0;
    return;
  }
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const float inv_sqrt_c = float(1.0 / sqrt(double(hd)));
  for (int64_t e = threadIdx.x; e < nv; e += blockDim.x) Pt[e] = 0;
  for (int64_t h0 = 0; h0 < H; h0 += hg) {
    const int64_t ng = min(int64_t(hg), H - h0);
    __syncthreads();  // q_s of the previous group is consumed
    for (int64_t t = threadIdx.x; t < ng * hd; t += blockDim.x) q_s[t] = kl.q[(i * H + h0) * hd + t];
    if (threadIdx.x < ng) m_s[threadIdx.x] = -INFINITY, s_s[threadIdx.x] = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t e0 = 0; e0 < nv; e0 += kTile) {
        const int64_t nt = min(int64_t(kTile), nv - e0);
        __syncthreads();  // the previous tile's logits are consumed
        for (int64_t t = threadIdx.x; t < nt * hd; t += blockDim.x) c_s[t] = kl.Ce[(base + e0) * hd + t];
        __syncthreads();
        for (int64_t pr = warp; pr < nt * ng; pr += kWarps) {
          const int64_t e = pr / ng, h = pr - e * ng;
          const float d = warp_dot(q_s + h * hd, c_s + e * hd, hd, lane);
          if (lane == 0) l_s[h * kTile + e] = d * inv_sqrt_c;
        }
        __syncthreads();
        if (pass == 0) {
          if (threadIdx.x < ng) {  // online max and sum, entries in order
            const int64_t h = threadIdx.x;
            float m = m_s[h], s = s_s[h];
            for (int64_t e = 0; e < nt; ++e) {
              const float l = l_s[h * kTile + e], mn = fmaxf(m, l);
              s = s * expf(m - mn) + expf(l - mn);
              m = mn;
            }
            m_s[h] = m, s_s[h] = s;
          }
        } else if (threadIdx.x < nt) {  // Pt over the group's heads in order
          const int64_t e = threadIdx.x;
          float acc = Pt[e0 + e];
          for (int64_t h = 0; h < ng; ++h) acc += expf(l_s[h * kTile + e] - m_s[h]) / s_s[h];
          Pt[e0 + e] = acc;
        }
      }
    }
  }
  __syncthreads();
  // the selected slots: a thread per slot j (strided), the block tree for the sums
  const int32_t* sel = kl.sel + i * ks;
  const float* I = scores + i * ix.smax;
  float psum = 0, mx = -INFINITY;
  for (int64_t j = threadIdx.x; j < kt; j += blockDim.x) {
    psum += Pt[sel[j] - base];
    mx = fmaxf(mx, I[sel[j] - base]);
  }
  psum = detail::block_reduce(psum, detail::Sum{}, 0.0f);
  mx = detail::block_reduce(mx, detail::Max{}, -INFINITY);
  float zsum = 0;
  for (int64_t j = threadIdx.x; j < kt; j += blockDim.x) zsum += expf(I[sel[j] - base] - mx);
  zsum = detail::block_reduce(zsum, detail::Sum{}, 0.0f);
  const float cf = float(kl.coeff);
  double klsum = 0;
  float dot_pg = 0;
  for (int64_t j = threadIdx.x; j < kt; j += blockDim.x) {
    const float p = Pt[sel[j] - base] / psum;
    const float pi = expf(I[sel[j] - base] - mx) / zsum;
    klsum += double(p + kEps) * (log(double(p + kEps)) - log(double(pi + kEps)));
    const float gpi = -cf * (p + kEps) / (pi + kEps);
    pi_s[j] = pi, gpi_s[j] = gpi;
    dot_pg += pi * gpi;
  }
  klsum = detail::block_reduce(klsum, detail::Sum{}, 0.0);
  dot_pg = detail::block_reduce(dot_pg, detail::Sum{}, 0.0f);
  for (int64_t j = threadIdx.x; j < ks; j += blockDim.x)  // each thread reads back only the slots it wrote
    coef[i * ks + j] = j < kt ? pi_s[j] * (gpi_s[j] - dot_pg) : 0.0f;
  if (threadIdx.x == 0) row_loss[i] = klsum;
}

__global__ void __launch_bounds__(kThreads)
    kl_query_grad_kernel(DeviceIndexer ix, DeviceIndexerKL kl, const float* __restrict__ coef,
                         float* __restrict__ dqI, float* __restrict__ dlam) {
  extern __shared__ float smem[];
  const int64_t HI = ix.HI, cI = ix.cI, i = blockIdx.x, ks = kl.kstride;
  float* q_s = smem;                 // [HI, cI]
  float* k_s = q_s + HI * cI;        // [kTile, cI]
  float* qk_s = k_s + kTile * cI;    // [kTile, HI]
  float* lam_s = qk_s + kTile * HI;  // [HI]
  float* dI_s = lam_s + HI;          // [kTile]
  const int64_t kt = min(ks, int64_t(ix.nvis[i]));
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int64_t t = threadIdx.x; t < HI * cI; t += blockDim.x) q_s[t] = ix.qI[i * HI * cI + t];
  for (int64_t h = threadIdx.x; h < HI; h += blockDim.x) lam_s[h] = ix.lam[i * HI + h];
  float acc[kAcc];
#pragma unroll
  for (int r = 0; r < kAcc; ++r) acc[r] = 0;
  float dl = 0;
  for (int64_t j0 = 0; j0 < kt; j0 += kTile) {
    const int64_t nt = min(int64_t(kTile), kt - j0);
    __syncthreads();  // the previous tile is consumed
    for (int64_t t = threadIdx.x; t < nt * cI; t += blockDim.x) {
      const int64_t jj = t / cI;
      k_s[t] = ix.K[int64_t(kl.sel[i * ks + j0 + jj]) * cI + (t - jj * cI)];
    }
    if (threadIdx.x < nt) dI_s[threadIdx.x] = coef[i * ks + j0 + threadIdx.x];
    __syncthreads();
    for (int64_t pr = warp; pr < nt * HI; pr += kWarps) {
      const int64_t jj = pr / HI, h = pr - jj * HI;
      const float d = warp_dot(q_s + h * cI, k_s + jj * cI, cI, lane);
      if (lane == 0) qk_s[jj * HI + h] = d;
    }
    __syncthreads();
    if (threadIdx.x < HI)
      for (int64_t jj = 0; jj < nt; ++jj) {
        const float qk = qk_s[jj * HI + threadIdx.x];
        if (qk > 0) dl += dI_s[jj] * qk;
      }
#pragma unroll
    for (int r = 0; r < kAcc; ++r) {
      const int64_t idx = threadIdx.x + int64_t(r) * kThreads;
      if (idx >= HI * cI) break;
      const int64_t h = idx / cI, t = idx - h * cI;
      for (int64_t jj = 0; jj < nt; ++jj)
        if (qk_s[jj * HI + h] > 0) acc[r] += (dI_s[jj] * lam_s[h]) * k_s[jj * cI + t];
    }
  }
  if (threadIdx.x < HI) dlam[i * HI + threadIdx.x] = dl;
#pragma unroll
  for (int r = 0; r < kAcc; ++r) {
    const int64_t idx = threadIdx.x + int64_t(r) * kThreads;
    if (idx < HI * cI) dqI[i * HI * cI + idx] = acc[r];
  }
}

// ------------------------------------------------------------------ dK over inverse lists
// The pairs (query i, slot j) selecting an entry of tile t (kTile entries), as i * kstride + j (inverse_lists.cuh).
struct SelectionLists {
  const int32_t* sel;
  const int32_t* nvis;
  int64_t ks;
  __device__ int64_t length(int64_t i) const { return min(ks, int64_t(nvis[i])); }
  __device__ const int32_t* entries(int64_t i) const { return sel + i * ks; }
  __device__ int64_t pair(int64_t i, int64_t s) const { return i * ks + s; }
};

size_t dk_smem(const DeviceIndexer& ix) {
  return size_t(kTile * ix.cI + ix.HI * ix.cI + 2 * kTile * ix.HI + kTile + ix.HI) * sizeof(float);
}

// dK rows c0 .. c0 + 15: the tile's pairs a query at a time (up to kTile of its pairs as one chunk).
__global__ void __launch_bounds__(kGradThreads)
    dk_kernel(DeviceIndexer ix, DeviceIndexerKL kl, const float* __restrict__ coef, const int32_t* __restrict__ pairs,
              const int32_t* __restrict__ tile_start, float* __restrict__ dK) {
  extern __shared__ float smem[];
  const int64_t HI = ix.HI, cI = ix.cI, ks = kl.kstride, c0 = int64_t(blockIdx.x) * kTile;
  float* acc_s = smem;                 // [kTile, cI] each thread owns its columns
  float* q_s = acc_s + kTile * cI;     // [HI, cI] the chunk's query row
  float* w_s = q_s + HI * cI;          // [kTile, HI] dI lam_h
  float* qk_s = w_s + kTile * HI;      // [kTile, HI]
  float* dI_s = qk_s + kTile * HI;     // [kTile]
  float* lam_s = dI_s + kTile;         // [HI]
  __shared__ int ent_s[kTile];
  __shared__ int n_s;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, warps = kGradThreads / 32;
  for (int64_t t = threadIdx.x; t < kTile * cI; t += blockDim.x) acc_s[t] = 0;
  const int64_t end = tile_start[blockIdx.x + 1];
  for (int64_t p = tile_start[blockIdx.x]; p < end;) {
    const int64_t i = pairs[p] / ks;
    __syncthreads();  // the previous chunk is consumed
    if (threadIdx.x == 0) {
      int n = 0;
      while (n < kTile && p + n < end && pairs[p + n] / ks == i) ++n;
      n_s = n;
    }
    for (int64_t t = threadIdx.x; t < HI * cI; t += blockDim.x) q_s[t] = ix.qI[i * HI * cI + t];
    for (int64_t h = threadIdx.x; h < HI; h += blockDim.x) lam_s[h] = ix.lam[i * HI + h];
    __syncthreads();
    const int n = n_s;
    if (threadIdx.x < n) {
      const int64_t slot = pairs[p + threadIdx.x];
      ent_s[threadIdx.x] = int(kl.sel[slot] - c0);
      dI_s[threadIdx.x] = coef[slot];
    }
    __syncthreads();
    for (int64_t pr = warp; pr < int64_t(n) * HI; pr += warps) {
      const int64_t k = pr / HI, h = pr - k * HI;
      const float d = warp_dot(q_s + h * cI, ix.K + (c0 + ent_s[k]) * cI, cI, lane);
      if (lane == 0) {
        qk_s[k * HI + h] = d;
        w_s[k * HI + h] = dI_s[k] * lam_s[h];  // the CPU's dd
      }
    }
    __syncthreads();
    for (int64_t t = threadIdx.x; t < cI; t += blockDim.x)
      for (int k = 0; k < n; ++k) {
        float a = acc_s[ent_s[k] * cI + t];
        for (int64_t h = 0; h < HI; ++h)
          if (qk_s[k * HI + h] > 0) a += w_s[k * HI + h] * q_s[h * cI + t];
        acc_s[ent_s[k] * cI + t] = a;
      }
    p += n;
  }
  __syncthreads();
  for (int64_t t = threadIdx.x; t < kTile * cI; t += blockDim.x)
    if (c0 + t / cI < ix.NE) dK[c0 * cI + t] = acc_s[t];
}

int64_t entry_tiles(const DeviceIndexer& ix) { return (ix.NE + kTile - 1) / kTile; }

void validate(const DeviceIndexer& ix, const DeviceIndexerKL* kl, const char* what) {
  if (ix.N <= 0 || ix.HI <= 0 || ix.HI > kThreads || ix.cI <= 0 || ix.HI * ix.cI > kMaxIndexerRow || ix.NE < 0 ||
      ix.smax < 1)
    throw Error(fmt::format("{}: unsupported shape N {} HI {} (<= {}) cI {} (HI cI <= {}) NE {} smax {}", what, ix.N,
                            ix.HI, kThreads, ix.cI, kMaxIndexerRow, ix.NE, ix.smax));
  const size_t row_smem = size_t(ix.HI * ix.cI + kTile * ix.cI + 2 * kTile * ix.HI + ix.HI + kTile) * sizeof(float);
  if (row_smem > kMaxSmem || dk_smem(ix) > kMaxSmem)
    throw Error(fmt::format("{}: HI {} cI {} need more shared memory than {} bytes", what, ix.HI, ix.cI, kMaxSmem));
  if (kl) {
    if (kl->H <= 0 || kl->hd <= 0 || kl->kstride < 0)
      throw Error(fmt::format("{}: unsupported H {} head_dim {} kstride {}", what, kl->H, kl->hd, kl->kstride));
    if (ix.N * kl->kstride >= (int64_t(1) << 31))
      throw Error(fmt::format("{}: N * kstride = {} must stay under 2^31 (int32 pair indices)", what,
                              ix.N * kl->kstride));
    if (kl_forward_smem(ix, *kl, 1) > kMaxSmem)
      throw Error(fmt::format("{}: head_dim {} smax {} kstride {} need more shared memory than {} bytes", what,
                              kl->hd, ix.smax, kl->kstride, kMaxSmem));
  }
}

void set_smem(const void* kernel, size_t bytes) {
  TREX_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}
}  // namespace

void indexer_scores(const DeviceIndexer& ix, float* scores, cudaStream_t s) {
  validate(ix, nullptr, "indexer_scores");
  const size_t smem = size_t(ix.HI * ix.cI + kTile * ix.cI + kTile * ix.HI + ix.HI) * sizeof(float);
  set_smem(reinterpret_cast<const void*>(scores_kernel), smem);
  scores_kernel<<<unsigned(ix.N), kThreads, smem, s>>>(ix, scores);
  TREX_CUDA_CHECK_LAUNCH();
}

void indexer_dense_sel(const DeviceIndexer& ix, int32_t* sel, cudaStream_t s) {
  validate(ix, nullptr, "indexer_dense_sel");
  dense_sel_kernel<<<unsigned(ix.N), kThreads, 0, s>>>(ix, sel);
  TREX_CUDA_CHECK_LAUNCH();
}

size_t indexer_kl_scratch_bytes(const DeviceIndexer& ix, const DeviceIndexerKL& kl) {
  size_t b = aligned(size_t(std::max<int64_t>(1, ix.N * kl.kstride)) * sizeof(float));
  if (ix.NE > 0 && kl.kstride > 0) {
    const int64_t tiles = entry_tiles(ix);
    b += aligned(size_t(tiles) * 4) + aligned(size_t(tiles + 1) * 4) + aligned(size_t(ix.N * kl.kstride) * 4);
  }
  return b;
}

void indexer_kl(const DeviceIndexer& ix, const DeviceIndexerKL& kl, const float* scores, double* row_loss,
                float* dqI, float* dlam, float* dK, DeviceArena& scratch, cudaStream_t s) {
  validate(ix, &kl, "indexer_kl");
  const DeviceArena::Mark mark = scratch.mark();
  float* coef = scratch.floats(std::max<int64_t>(1, ix.N * kl.kstride));
  // 1. per query: Pt, the KL terms, dI
  const KlGeometry geo = kl_geometry(ix, kl);
  set_smem(reinterpret_cast<const void*>(kl_forward_kernel), geo.smem);
  kl_forward_kernel<<<unsigned(ix.N), kThreads, geo.smem, s>>>(ix, kl, scores, row_loss, coef, geo.hg);
  TREX_CUDA_CHECK_LAUNCH();
  // 2. per query: dqI, dlam
  const size_t qsmem = size_t(ix.HI * ix.cI + kTile * ix.cI + kTile * ix.HI + ix.HI + kTile) * sizeof(float);
  set_smem(reinterpret_cast<const void*>(kl_query_grad_kernel), qsmem);
  kl_query_grad_kernel<<<unsigned(ix.N), kThreads, qsmem, s>>>(ix, kl, coef, dqI, dlam);
  TREX_CUDA_CHECK_LAUNCH();
  // 3. dK over the inverse lists
  if (ix.NE > 0 && kl.kstride > 0) {
    const int64_t tiles = entry_tiles(ix);
    int32_t* tile_count = scratch.ints(tiles);
    int32_t* tile_start = scratch.ints(tiles + 1);
    int32_t* pairs = scratch.ints(ix.N * kl.kstride);
    build_inverse_lists(SelectionLists{kl.sel, ix.nvis, kl.kstride}, ix.N, tiles, kTile, tile_count, tile_start, pairs,
                        s);
    set_smem(reinterpret_cast<const void*>(dk_kernel), dk_smem(ix));
    dk_kernel<<<unsigned(tiles), kGradThreads, dk_smem(ix), s>>>(ix, kl, coef, pairs, tile_start, dK);
    TREX_CUDA_CHECK_LAUNCH();
  } else if (ix.NE > 0) {
    TREX_CUDA_CHECK(cudaMemsetAsync(dK, 0, size_t(ix.NE * ix.cI) * sizeof(float), s));  // no lists
  }
  scratch.release(mark);  // stream-ordered: a later allocation's kernels queue after these on the same stream
}

}  // namespace trex::cuda
