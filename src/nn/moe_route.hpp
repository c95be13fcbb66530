// MoE routing arithmetic (DEEPSEEK_V4.md §7, §13, §16.6-16.7), the part of model/moe.cpp that is not the expert
// GEMMs: sqrt-softplus affinities, the selection (top-k on affinity + bias, ties to the lower index, or a fixed
// hash table row per token), the renormalised and scaled routing weights, the grouping of the routed rows into
// expert order (stable in token order), their gather and the combine, the sequence-balance loss, and the router
// backward (routing-weight gradients to router-score gradients). model/moe.cpp calls these (the model's bits are
// theirs), and they are the oracle of the CUDA routing kernels (cuda/moe_route.hpp, tests/cuda/gpu/moe_route_*).
// Shapes: N tokens, E routed experts, k experts per token; a sequence-balance layout of B sequences of T tokens
// (N = B T). Row-major [N, E] and [N, k] arrays; dispatched rows are numbered 0 .. N k - 1 in expert order.
#pragma once
#include <cstdint>

namespace trex::nn {

// One token's selection and weights from its affinities a[0..E): hash_row non-null: sel[j] = hash_row[j] (the
// token's tid2eid row); else the top-k of a[e] + bias[e] (bias null: a alone; the bias steers the selection only)
// by nn::topk_lower_index, in its order (descending, ties to the lower index), `biased` E floats of scratch.
// w[j] = R a[sel[j]] / sum_j a[sel[j]] (the sum in float, in slot order).
void moe_select_token(const float* a, const float* bias, const int64_t* hash_row, int64_t E, int64_t k, float R,
                      float* biased, int32_t* sel, float* w);

// The router forward of N tokens from their scores [N, E] (the router GEMM's output): a = sqrt_softplus(scores)
// [N, E], then moe_select_token per token. tid2eid non-null: a hash layer, token i selects row tokens[i] of the
// table [V, k] (its ids must lie in [0, E)); else bias [E] (may be null). OpenMP over tokens.
void moe_route_forward(const float* scores, const float* bias, const int64_t* tid2eid, const int32_t* tokens,
                       int64_t N, int64_t E, int64_t k, float R, float* a, int32_t* sel, float* w);
// The same selection and weights from given affinities a [N, E] (the CUDA check's oracle: the device's own
// affinities, whose last bits differ from the CPU's expf/log1pf).
void moe_route_select(const float* a, const float* bias, const int64_t* tid2eid, const int32_t* tokens, int64_t N,
                      int64_t E, int64_t k, float R, int32_t* sel, float* w);

// Grouping of the N k selections into expert order, stable in (token, slot) order: counts[E] rows per expert,
// offsets[E + 1] their exclusive prefix sums; dispatched row r holds token order_tok[r], slot order_slot[r];
// row_of[i k + j] = the row of (token i, slot j) (order_* inverted).
void moe_group_rows(const int32_t* sel, int64_t N, int64_t E, int64_t k, int64_t* counts, int64_t* offsets,
                    int32_t* order_tok, int32_t* order_slot, int32_t* row_of);

// Gather into expert order: xg[r] = x[order_tok[r]] (rows of d floats); when w and wl are given, also
// wl[r] = w[order_tok[r] k + order_slot[r]] (each row's routing weight). OpenMP over rows.
void moe_gather_rows(const float* x, const float* w, const int32_t* order_tok, const int32_t* order_slot,
                     int64_t rows, int64_t k, int64_t d, float* xg, float* wl);

// The combine: out[i] += rows[r] for token i's k dispatched rows r = row_of[i k + j], added in increasing r
// (the order of a serial loop over the rows: the same bits on any thread count). OpenMP over tokens.
void moe_scatter_add_rows(const int32_t* row_of, int64_t N, int64_t k, int64_t d, const float* rows, float* out);

// Sequence-balance loss (§16.6): per sequence b, sum_e E / (k T) cnt_b[e] P_b[e] with cnt_b[e] the selections of
// expert e in b and P_b[e] = sum_t a[t, e] / sum_e' a[t, e'] / T; times alpha, averaged over the B sequences.
// Doubles, sequence by sequence in order.
double moe_balance_loss(const float* a, const int32_t* sel, int64_t B, int64_t T, int64_t E, int64_t k,
                        double alpha);

// Router backward: ds [N, E] (overwritten) from dw [N, k] (the gradient of each (token, slot)'s routing weight)
// through w = R a_sel / sum a_sel, plus (balance) the sequence-balance loss's gradient through every affinity
// (its counts held constant), then through a = sqrt_softplus(scores). balance false: a hash layer (no balance
// loss). OpenMP over tokens.
void moe_route_backward(const float* scores, const float* a, const int32_t* sel, const float* dw, int64_t N,
                        int64_t E, int64_t k, float R, bool balance, int64_t B, int64_t T, double alpha, float* ds);

}  // namespace trex::nn
