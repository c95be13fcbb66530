// Inverse lists on the device without atomics (the attention core's dC, the indexer's dK): every query i lists
// entries (its compressed keys, its selected entries); for each tile of `tile` consecutive entries, the pairs
// (query, slot) that list an entry of the tile, queries in increasing order and a query's slots in list order —
// so that a key-gradient block can sum over its entries' queries in a fixed order. Built in three launches: count
// per tile, an exclusive scan in tile order (one thread), fill from each tile's start; a round takes kPairRound
// queries, a warp per query, lanes over its slots, ballots giving each pair's position.
// Lists is the caller's view of its lists: __device__ length(i), entries(i) (the list's first entry id) and
// pair(i, s) (the value written for slot s of query i). Included by .cu files only (kernels in an anonymous
// namespace: each file gets its own copy).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/check.hpp"

namespace trex::cuda {
namespace {

namespace inverse {
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kPairRound = 32;  // queries per round (4 per warp)

// kFill false: tile_count[t] = the tile's pairs; true: write them from tile_start[t].
template <bool kFill, class Lists>
__global__ void __launch_bounds__(kThreads)
    pairs_kernel(Lists L, int64_t N, int64_t tile, int32_t* __restrict__ tile_count,
                 const int32_t* __restrict__ tile_start, int32_t* __restrict__ pairs) {
  __shared__ int cnt_s[kPairRound];
  const int64_t c0 = int64_t(blockIdx.x) * tile, c1 = c0 + tile;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  int64_t base = kFill ? tile_start[blockIdx.x] : 0;
  for (int64_t i0 = 0; i0 < N; i0 += kPairRound) {
    for (int r = warp; r < kPairRound; r += kWarps) {
      const int64_t i = i0 + r;
      int cnt = 0;
      if (i < N) {
        const int64_t n = L.length(i);
        const int32_t* list = L.entries(i);
        for (int64_t s0 = 0; s0 < n; s0 += 32) {
          const int64_t s = s0 + lane;
          const int32_t c = s < n ? list[s] : -1;
          cnt += __popc(__ballot_sync(0xffffffffu, c >= c0 && c < c1));
        }
      }
      if (lane == 0) cnt_s[r] = cnt;
    }
    __syncthreads();
    if (kFill) {
      for (int r = warp; r < kPairRound; r += kWarps) {
        const int64_t i = i0 + r;
        if (i >= N) continue;
        int64_t pos = base;
        for (int rr = 0; rr < r; ++rr) pos += cnt_s[rr];
        const int64_t n = L.length(i);
        const int32_t* list = L.entries(i);
        for (int64_t s0 = 0; s0 < n; s0 += 32) {
          const int64_t s = s0 + lane;
          const int32_t c = s < n ? list[s] : -1;
          const bool in = c >= c0 && c < c1;
          const unsigned ballot = __ballot_sync(0xffffffffu, in);
          if (in) pairs[pos + __popc(ballot & ((1u << lane) - 1u))] = int32_t(L.pair(i, s));
          pos += __popc(ballot);
        }
      }
    }
    for (int r = 0; r < kPairRound; ++r) base += cnt_s[r];
    __syncthreads();  // cnt_s is rewritten by the next round
  }
  if (!kFill && threadIdx.x == 0) tile_count[blockIdx.x] = int32_t(base);
}

// tile_start[0] = 0, tile_start[t + 1] = tile_start[t] + tile_count[t]: one thread, in tile order
__global__ void tile_scan_kernel(const int32_t* __restrict__ tile_count, int32_t* __restrict__ tile_start,
                                 int64_t tiles) {
  int32_t s = 0;
  tile_start[0] = 0;
  for (int64_t t = 0; t < tiles; ++t) tile_start[t + 1] = (s += tile_count[t]);
}
}  // namespace inverse

// The three launches: tile_count [tiles], tile_start [tiles + 1] and pairs (room for every listed slot) from the
// caller's scratch; tile_start and pairs hold the lists afterwards.
template <class Lists>
void build_inverse_lists(const Lists& lists, int64_t N, int64_t tiles, int64_t tile, int32_t* tile_count,
                         int32_t* tile_start, int32_t* pairs, cudaStream_t s) {
  inverse::pairs_kernel<false><<<unsigned(tiles), inverse::kThreads, 0, s>>>(lists, N, tile, tile_count, nullptr,
                                                                              nullptr);
  TREX_CUDA_CHECK_LAUNCH();
  inverse::tile_scan_kernel<<<1, 1, 0, s>>>(tile_count, tile_start, tiles);
  TREX_CUDA_CHECK_LAUNCH();
  inverse::pairs_kernel<true><<<unsigned(tiles), inverse::kThreads, 0, s>>>(lists, N, tile, nullptr, tile_start,
                                                                             pairs);
  TREX_CUDA_CHECK_LAUNCH();
}

}  // namespace
}  // namespace trex::cuda
