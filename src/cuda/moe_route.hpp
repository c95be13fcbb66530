// MoE routing on the device, the CUDA twins of nn/moe_route.hpp (same arguments and semantics, device pointers,
// queued on a stream): the router forward (sqrt-softplus affinities, top-k on affinity + bias with ties to the lower
// index or a hash table row, the renormalised and scaled weights), the grouping of the N k routed rows into expert
// order stable in (token, slot) order, their gather, the combine, the sequence-balance loss and the router backward.
// nn::moe_* is the oracle (tests/cuda/gpu/moe_route_cases.hpp). Deterministic and without atomics: the grouping
// counts each expert's rows per chunk of tokens by a scan of the chunk in entry order, sums the chunks in chunk
// order and places the rows chunk by chunk; every floating-point sum has a fixed order for a given shape (the same
// bits on every run). The per-expert counts size the grouped expert GEMMs: moe_counts_to_host brings them to the
// host (the one synchronisation a MoE layer needs). CUDA builds only (moe_route.cu).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/arena.hpp"

namespace trex::cuda {

constexpr int64_t kMaxRouteExperts = 1024;  // E: a warp's lanes hold 32 selection bits each
constexpr int64_t kMaxRouteK = 32;          // k: one lane per slot

// The router forward of N tokens, nn::moe_route_forward's contract: a = sqrt_softplus(scores) [N, E] (expf, log1pf:
// within a few ulps of the CPU's, not its bits); tid2eid non-null: a hash layer, sel[i k + j] = tid2eid[tokens[i]
// k + j] (ids in [0, E)); else the top-k of a + bias (bias null: a alone) in nn::topk_lower_index's order (score
// descending, ties to the lower index; scores must not be NaN); w = R a_sel / sum_j a_sel (the sum in slot order:
// from the same a, the CPU's bits). One warp per token. E <= kMaxRouteExperts, 1 <= k <= min(E, kMaxRouteK)
// (trex::Error otherwise).
void moe_route_forward(const float* scores, const float* bias, const int64_t* tid2eid, const int32_t* tokens,
                       int64_t N, int64_t E, int64_t k, float R, float* a, int32_t* sel, float* w, cudaStream_t s);

// Grouping, nn::moe_group_rows's contract: counts[E] and offsets[E + 1] (int64, on the device), order_tok,
// order_slot [N k] (dispatched row r's token and slot) and row_of [N k] (their inverse), stable in (token, slot)
// order; every sel id must lie in [0, E). Temporaries from `scratch` (released before returning).
void moe_group_rows(const int32_t* sel, int64_t N, int64_t E, int64_t k, int64_t* counts, int64_t* offsets,
                    int32_t* order_tok, int32_t* order_slot, int32_t* row_of, DeviceArena& scratch, cudaStream_t s);
// The per-expert counts copied to host_counts[E] (waits for the stream: the grouped GEMMs are sized by them).
void moe_counts_to_host(const int64_t* counts, int64_t E, int64_t* host_counts, cudaStream_t s);

// Gather into expert order: xg[r] = x[order_tok[r]] (rows of d floats); with w and wl, also wl[r] = w[order_tok[r]
// k + order_slot[r]]. One block per row.
void moe_gather_rows(const float* x, const float* w, const int32_t* order_tok, const int32_t* order_slot,
                     int64_t rows, int64_t k, int64_t d, float* xg, float* wl, cudaStream_t s);
// The combine, nn::moe_scatter_add_rows's contract and bits: out[i] += rows[r] for token i's k rows r = row_of[i k
// + j], added in increasing r. One block per token (no two blocks write one element).
void moe_scatter_add_rows(const int32_t* row_of, int64_t N, int64_t k, int64_t d, const float* rows, float* out,
                          cudaStream_t s);

// Sequence-balance loss, nn::moe_balance_loss's terms: row_loss[b] = alpha sum_e E / (k T) cnt_b[e] P_b[e] / B
// (double; sum_row_losses (ops.hpp) adds them in sequence order, as the CPU does), seq_counts[b E + e] = cnt_b[e]
// (kept for the backward). P_b in per-chunk partials of 64 tokens summed in chunk order, each token's affinity
// sum by a warp in a fixed order. N = B T. Temporaries from `scratch` (released before returning).
void moe_balance_loss(const float* a, const int32_t* sel, int64_t B, int64_t T, int64_t E, int64_t k, double alpha,
                      double* row_loss, int32_t* seq_counts, DeviceArena& scratch, cudaStream_t s);

// Router backward, nn::moe_route_backward's contract: ds [N, E] overwritten from the routing-weight gradients,
// dw[i k + j] (dw_row_of null) or dw[dw_row_of[i k + j]] (dw_row_of = row_of: the gradients as the expert kernels
// leave them, one per dispatched row), plus, when seq_counts (moe_balance_loss's) is given, the balance loss's
// gradient (alpha, B, T as there); null: a hash layer. One warp per token.
void moe_route_backward(const float* scores, const float* a, const int32_t* sel, const float* dw,
                        const int32_t* dw_row_of, const int32_t* seq_counts, int64_t N, int64_t E, int64_t k, float R,
                        int64_t B, int64_t T, double alpha, float* ds, cudaStream_t s);

}  // namespace trex::cuda
