// The attention core of every layer kind (DEEPSEEK_V4.md §3-§5): for query i and head h one joint softmax over the
// query's sliding-window keys kv[ws[i] .. i], its compressed entries C[comp[i][0 .. ncomp[i])] and a per-head sink
// logit that joins the denominator only. K == V: one kv row per token (one C row per entry), shared by the heads.
//   l_e = scale q_ih · k_e,   P_e = exp(l_e - m) / (exp(sink_h - m) + Σ_e' exp(l_e' - m)),   o_ih = Σ_e P_e k_e
// Backward from g = dL/do_ih:  dl_e = P_e (g · k_e - g · o_ih) scale;  dq_ih = Σ_e dl_e k_e;
//   dk_e += dl_e q_ih + P_e g (its key and its value role);  dsink_h += -(1 - Σ_e P_e) g · o_ih.
// The fast path (OpenMP over queries, nn::Vec8 dots: what model/attention.cpp runs) and a readable reference
// (plain loops, double accumulation, queries in order: the oracle of the fast path and of cuda/sparse_attention).
#pragma once
#include <cstdint>

#include "nn/arena.hpp"

namespace trex::nn {

struct SparseAttention {
  int64_t N = 0, H = 0, hd = 0;     // queries (one per token), heads, head_dim
  int64_t window = 0;               // sliding window w: query i's window keys are ws[i] .. i, with i - ws[i] < w
  int64_t NE = 0, cmax = 0;         // compressed entries; the row stride of comp
  const float* q = nullptr;         // [N, H, hd]
  const float* kv = nullptr;        // [N, hd]
  const float* C = nullptr;         // [NE, hd] (may be null when no query lists an entry)
  const int32_t* ws = nullptr;      // [N] first window key of each query (the model: max(doc_start[i], i - w + 1))
  const int32_t* comp = nullptr;    // [N, cmax] each query's compressed entries, its first ncomp[i] used, in order
  const int32_t* ncomp = nullptr;   // [N]
  const float* sink = nullptr;      // [H] sink logits
  float scale = 1;                  // logit scale (the model: 1 / sqrt(hd))
  int64_t kmax() const { return window + cmax; }  // P's row length
  // key e of query i: window keys first (e < nw = i - ws[i] + 1), then the compressed entries in list order
};

// P [N, H, kmax]: row (i, h) gets its first nw + ncomp[i] probabilities (window keys first; the rest of the row is
// not written); o [N, H, hd]. OpenMP over queries (each query's values do not depend on the schedule).
void sparse_attention_forward(const SparseAttention& a, float* P, float* o);
void sparse_attention_forward_ref(const SparseAttention& a, float* P, float* o);

// The key gradients of the fast backward: dkv [N, hd], dC [NE, hd], dsink [H] (a sum to add to the sink's
// gradient), contiguous in that order in one block.
struct SparseAttentionGrads {
  float *dkv = nullptr, *dC = nullptr, *dsink = nullptr;
};
// From P and o of the forward and g = dL/do [N, H, hd]: dq [N, H, hd] overwritten. The key gradients are summed in
// per-thread partials (nthreads blocks of N hd + NE hd + H floats, allocated zeroed from `arena` and left there;
// a static schedule of 8-query chunks over a team of nthreads), then added into the first block in thread order:
// the same bits for the same thread count. Returns pointers into that first block.
SparseAttentionGrads sparse_attention_backward(const SparseAttention& a, const float* P, const float* o,
                                               const float* g, float* dq, Arena& arena, int nthreads);
// The reference: dq, dkv [N, hd], dC [NE, hd], dsink [H] overwritten; every sum in double, queries in order.
void sparse_attention_backward_ref(const SparseAttention& a, const float* P, const float* o, const float* g, float* dq,
                                   float* dkv, float* dC, float* dsink);

}  // namespace trex::nn
