// The lightning indexer's non-GEMM arithmetic (DEEPSEEK_V4.md §5, §16.5): its scores over the compressed entries a
// query sees, and the detached KL loss that trains it towards the main attention's distribution.
//   scores   I_e = Σ_h lam_h relu(qI_h · K_e)                                  (e < nvis: the query's entries)
//   main     Pt_e = Σ_h softmax_e(q_h · Ce_e / sqrt(hd)) over ALL visible entries (q, Ce detached)
//   KL over the selected entries S:  p_j = Pt_j / Σ_S Pt,  pi_j = softmax_S(I)_j,
//            loss = coeff Σ_i Σ_j (p_j + eps) (log(p_j + eps) - log(pi_j + eps)),  eps = 1e-10
//   backward gpi_j = -coeff (p_j + eps) / (pi_j + eps),  dI_j = pi_j (gpi_j - Σ_S pi gpi), and through the ReLU
//            (qk > 0 only): dlam_h += dI qk,  dqI_h += dI lam_h K_e,  dK_e += dI lam_h qI_h.
// lam is the head weight as the scores use it (the model: the projection's output times 1 / sqrt(cI HI)); dlam is
// the gradient with respect to that lam (the model applies the scale's chain rule after).
// The fast path (model/attention.cpp's loops, moved verbatim: OpenMP over queries, nn::attn_vec dots) and a readable
// reference (one query at a time, double sums: the oracle of the fast path and of cuda/indexer).
#pragma once
#include <cstdint>

#include "nn/arena.hpp"

namespace trex::nn {

struct Indexer {
  int64_t N = 0, HI = 0, cI = 0;   // queries (one per token), indexer heads, indexer head dim
  int64_t NE = 0, smax = 1;        // compressed entries; the row stride of the scores (>= every nvis, >= 1)
  const int32_t* nvis = nullptr;   // [N] entries visible to query i: base[i] .. base[i] + nvis[i] - 1
  const int32_t* base = nullptr;   // [N] first entry of query i's document
  const float* qI = nullptr;       // [N, HI, cI] indexer queries (after RoPE)
  const float* lam = nullptr;      // [N, HI] head weights (scaled)
  const float* K = nullptr;        // [NE, cI] the indexer compressor's entries
};

// The main attention's side of the KL and the selections it runs over.
struct IndexerKL {
  int64_t H = 0, hd = 0;            // main heads, head dim
  const float* q = nullptr;         // [N, H, hd] main queries (detached)
  const float* Ce = nullptr;        // [NE, hd] main compressed entries (detached)
  const int32_t* sel = nullptr;     // [N, kstride] global entry indices, -1 padded; query i uses min(kstride, nvis[i])
  int64_t kstride = 0;              // the top-k, or smax for the dense warm-up's lists (indexer_dense_sel)
  double coeff = 0;                 // the loss coefficient (the model: indexer_loss_coeff / (B T))
};

// scores [N, smax]: row i's first nvis[i] written, the rest untouched. OpenMP over queries.
void indexer_scores(const Indexer& ix, float* scores);
// sel [N, topk]: nn::topk_lower_index of row i's nvis[i] scores plus base[i], then -1 up to topk.
void indexer_select(const Indexer& ix, const float* scores, int64_t topk, int32_t* sel);
// The dense warm-up's lists [N, smax]: every visible entry in order, then -1.
void indexer_dense_sel(const Indexer& ix, int32_t* sel);

// The KL loss (times coeff) from the fast scores; dqI [N, HI, cI] and dlam [N, HI] overwritten. dK is summed in
// per-thread partials (nthreads blocks of max(1, NE cI) floats, allocated zeroed from `arena` and left there; a
// static schedule of 8-query chunks over a team of nthreads), the loss likewise in per-thread doubles; both are
// summed in thread order: the same bits for the same thread count. With_grads false (inference): the loss only,
// dK not summed (*dK set to null). Otherwise *dK points at the first block, the sum.
double indexer_kl(const Indexer& ix, const IndexerKL& kl, const float* scores, float* dqI, float* dlam, float** dK,
                  Arena& arena, int nthreads, bool with_grads = true);

// The references: double sums, one query at a time, queries in order. scores_ref writes the first nvis[i] of each
// row. kl_ref computes its own scores (in double) and returns the loss times coeff; dqI, dlam, dK [NE, cI]
// overwritten (any of them may be null).
void indexer_scores_ref(const Indexer& ix, float* scores);
double indexer_kl_ref(const Indexer& ix, const IndexerKL& kl, float* dqI, float* dlam, float* dK);

}  // namespace trex::nn
