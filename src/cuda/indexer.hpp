// The lightning indexer's scores and KL loss on the device, the CUDA twin of nn/indexer.hpp (DEEPSEEK_V4.md §5,
// §16.5): I_e = Σ_h lam_h relu(qI_h · K_e) over a query's visible entries, and the detached KL between the main
// attention's distribution over the selected entries and softmax(I) there, with dqI, dlam, dK. The top-k between
// them is cuda::topk_rows (ops.hpp). nn::indexer_scores_ref / indexer_kl_ref are the oracle
// (tests/cuda/gpu/indexer_cases.hpp). Deterministic without atomics: every sum has a fixed order for a given shape
// and lists (indexer.cu states them). CUDA builds only.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/arena.hpp"

namespace trex::cuda {

// nn::Indexer's fields, device pointers.
struct DeviceIndexer {
  int64_t N = 0, HI = 0, cI = 0;   // queries, indexer heads, indexer head dim (HI * cI <= kMaxIndexerRow)
  int64_t NE = 0, smax = 1;        // compressed entries; the scores' row stride (>= every nvis, >= 1)
  const int32_t* nvis = nullptr;   // [N] query i sees entries base[i] .. base[i] + nvis[i] - 1
  const int32_t* base = nullptr;   // [N]
  const float* qI = nullptr;       // [N, HI, cI]
  const float* lam = nullptr;      // [N, HI] head weights (scaled)
  const float* K = nullptr;        // [NE, cI]
};

// nn::IndexerKL's fields, device pointers.
struct DeviceIndexerKL {
  int64_t H = 0, hd = 0;          // main heads, head dim
  const float* q = nullptr;       // [N, H, hd] (detached)
  const float* Ce = nullptr;      // [NE, hd] (detached)
  const int32_t* sel = nullptr;   // [N, kstride] global entry indices, query i's first min(kstride, nvis[i]) used
  int64_t kstride = 0;            // the top-k, or smax for the dense lists
  double coeff = 0;               // the loss coefficient (the gradients use float(coeff), as the CPU)
};

constexpr int64_t kMaxIndexerRow = 8192;  // HI * cI: one query's indexer row is held in shared memory / registers

// scores [N, smax]: row i's first nvis[i] written, the rest untouched (topk_rows reads n = nvis). A block per query.
void indexer_scores(const DeviceIndexer& ix, float* scores, cudaStream_t s);
// The dense warm-up's lists [N, smax] (nn::indexer_dense_sel): every visible entry in order, then -1.
void indexer_dense_sel(const DeviceIndexer& ix, int32_t* sel, cudaStream_t s);

// Device memory indexer_kl takes from `scratch` (released before it returns).
size_t indexer_kl_scratch_bytes(const DeviceIndexer& ix, const DeviceIndexerKL& kl);
// From the scores (indexer_scores') and the lists: row_loss [N] (doubles, query i's KL sum without coeff: the loss is
// coeff * sum_row_losses(row_loss, N)), dqI [N, HI, cI], dlam [N, HI], dK [NE, cI], all overwritten (entries no
// query selects get 0). Throws trex::Error on unsupported sizes.
void indexer_kl(const DeviceIndexer& ix, const DeviceIndexerKL& kl, const float* scores, double* row_loss, float* dqI,
                float* dlam, float* dK, DeviceArena& scratch, cudaStream_t s);

}  // namespace trex::cuda
