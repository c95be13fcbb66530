// MoE of every block (DEEPSEEK_V4.md §7, §13, §16.6-16.7): sqrt-softplus affinities, top-k on affinity + bias
// (bias for selection only) or a fixed hash table, renormalised and scaled weights, grouped expert GEMMs with
// limited SwiGLU, the shared expert, the sequence-balance loss; forward and backward. Routed rows go through the
// ProcessGroup's all-to-all to the ranks owning their experts (expert parallelism, moe_dispatch.cpp; identity in
// one process), overlapped with the shared expert. The routing arithmetic (affinities, selection, weights, the
// grouping into expert order, gather and combine, balance loss, router backward) is nn/moe_route.hpp's.
#include <cstring>

#include "model/model_impl.hpp"
#include "nn/gemm.hpp"
#include "nn/gemm_bf16.hpp"
#include "nn/moe_experts.hpp"
#include "nn/moe_route.hpp"

namespace trex::model::detail {

// The weights (and gradients) of experts first .. first+count-1 of block b, for the grouped expert kernels.
static std::vector<nn::ExpertWeights> expert_weights(Ctx& c, const BlockOff& b, int64_t first, int64_t count) {
  std::vector<nn::ExpertWeights> ew(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j) {
    const size_t e = size_t(first + j);
    ew[size_t(j)] = {c.p(b.w1[e]), c.p(b.w3[e]), c.p(b.w2[e]), c.g(b.w1[e]), c.g(b.w3[e]), c.g(b.w2[e])};
  }
  return ew;
}

double moe_forward(Ctx& c, const Seq& seq, const BlockOff& b, const float* x, const int32_t* tokens, MoeSaved& s,
                   float* out) {
  const ModelConfig& cfg = c.cfg;
  const int64_t N = seq.N, d = cfg.hidden_size, E = cfg.n_routed_experts, k = cfg.num_experts_per_tok;
  const int64_t f = cfg.moe_intermediate_size, fs = f * cfg.n_shared_experts;
  const float R = float(cfg.routed_scaling_factor), limit = float(cfg.swiglu_limit);
  s.x = x;
  s.x16 = nullptr;  // set below when the shared expert reads x under bf16 operand copies
  s.s = c.arena.floats(N * E);
  s.a = c.arena.floats(N * E);
  s.w = c.arena.floats(N * k);
  s.sel = c.arena.ints(N * k);
  nn::linear(x, c.p(b.gate), s.s, N, E, d);  // router in fp32
  const float* bias = b.gate_bias >= 0 ? c.p(b.gate_bias) : nullptr;
  nn::moe_route_forward(s.s, bias, b.hash ? b.tid2eid : nullptr, tokens, N, E, k, R, s.a, s.sel, s.w);
  // group rows by expert (stable in token order)
  s.counts.assign(size_t(E), 0);
  s.offsets.assign(size_t(E) + 1, 0);
  s.order_tok = c.arena.ints(N * k);
  s.order_slot = c.arena.ints(N * k);
  s.row_of = c.arena.ints(N * k);
  nn::moe_group_rows(s.sel, N, E, k, s.counts.data(), s.offsets.data(), s.order_tok, s.order_slot, s.row_of);
  s.load = s.counts;
  const int64_t R_ = N * k;
  s.xg = c.arena.floats(R_ * d);
  float* wl = c.arena.floats(R_);  // routing weight of each routed row
  nn::moe_gather_rows(x, s.w, s.order_tok, s.order_slot, R_, k, d, s.xg, wl);
  // dispatch to the ranks owning the experts (one rank: all experts are local), overlapped with the shared
  // expert's first half
  EpPlan& P = s.ep;
  ep_plan(c.pg, s.counts, E, P);
  float *xr = nullptr, *wr = nullptr;
  int hx = -1, hw_ = -1;
  if (P.active()) {
    xr = c.arena.floats(P.rows * d);
    wr = c.arena.floats(P.rows);
    hx = c.pg.start_all_to_all_rows(s.xg, P.send_rows, xr, P.recv_rows, d);
    hw_ = c.pg.start_all_to_all_rows(wl, P.send_rows, wr, P.recv_rows, 1);
  }
  if (fs > 0) {
    s.sg = c.arena.floats(N * fs);
    s.su = c.arena.floats(N * fs);
    s.sh = c.arena.floats(N * fs);
    if (nn::bf16_operand_copies()) s.x16 = bf16_copy(c, x, N * d);
    nn::linear(x, c.p(b.sw1), s.sg, N, fs, d, false, s.x16);
    c.pg.progress();
    nn::linear(x, c.p(b.sw3), s.su, N, fs, d, false, s.x16);
    c.pg.progress();
    nn::swiglu_forward(s.sg, s.su, s.sh, N * fs, cfg.clamp_shared_expert ? limit : 0.0f);
  }
  if (P.active()) {
    c.pg.wait(hx);
    c.pg.wait(hw_);
    s.xe = c.arena.floats(P.rows * d);
    s.we = c.arena.floats(P.rows);
    ep_to_expert_order(P, xr, s.xe, d);
    ep_to_expert_order(P, wr, s.we, 1);
  } else {
    s.xe = s.xg;
    s.we = wl;
  }
  const int64_t Re = P.rows, El = P.local_experts, e0 = P.first_expert;
  s.g = c.arena.floats(Re * f);
  s.u = c.arena.floats(Re * f);
  s.h = c.arena.floats(Re * f);
  float* ye = c.arena.floats(Re * d);
  const auto ew = expert_weights(c, b, e0, El);  // grouped expert GEMMs over this rank's experts
  nn::experts_forward(ew, P.offsets.data(), {d, f, limit}, s.xe, s.we, s.g, s.u, s.h, ye, c.arena);
  // combine: results back to the ranks that own the tokens, overlapped with the shared expert's second half
  float* yg = ye;  // [R_, d] this rank's routed rows, expert order
  int hy = -1;
  if (P.active()) {
    float* ys = c.arena.floats(Re * d);
    ep_from_expert_order(P, ye, ys, d);
    yg = c.arena.floats(R_ * d);
    hy = c.pg.start_all_to_all_rows(ys, P.recv_rows, yg, P.send_rows, d);
  }
  if (fs > 0)
    nn::linear(s.sh, c.p(b.sw2), out, N, d, fs);
  else
    std::memset(out, 0, size_t(N * d) * 4);
  c.pg.wait(hy);
  nn::moe_scatter_add_rows(s.row_of, N, k, d, yg, out);  // the routed rows onto their tokens
  if (b.hash) return 0.0;
  // sequence-balance loss per row (all tokens), averaged over rows (§16.6)
  return nn::moe_balance_loss(s.a, s.sel, seq.B, seq.T, E, k, cfg.seq_balance_alpha);
}

void moe_backward(Ctx& c, const Seq& seq, const BlockOff& b, const MoeSaved& s, const float* dout, float* dx) {
  const ModelConfig& cfg = c.cfg;
  const int64_t N = seq.N, d = cfg.hidden_size, E = cfg.n_routed_experts, k = cfg.num_experts_per_tok;
  const int64_t f = cfg.moe_intermediate_size, fs = f * cfg.n_shared_experts;
  const float R = float(cfg.routed_scaling_factor), limit = float(cfg.swiglu_limit);
  const int64_t R_ = N * k;
  const EpPlan& P = s.ep;
  const int64_t Re = P.rows, El = P.local_experts, e0 = P.first_expert;
  // routed rows' output gradients, dispatched to the experts' owners, overlapped with the shared expert's
  // W2 backward
  float* dyg = c.arena.floats(R_ * d);
  nn::moe_gather_rows(dout, nullptr, s.order_tok, s.order_slot, R_, k, d, dyg, nullptr);
  float* dyr = nullptr;
  int hy = -1;
  if (P.active()) {
    dyr = c.arena.floats(Re * d);
    hy = c.pg.start_all_to_all_rows(dyg, P.send_rows, dyr, P.recv_rows, d);
  }
  float *dsg = nullptr, *dsu = nullptr;
  if (fs > 0) {
    float* dsh = c.arena.floats(N * fs);
    nn::linear_backward(s.sh, c.p(b.sw2), dout, dsh, c.g(b.sw2), N, d, fs);
    c.pg.progress();
    dsg = c.arena.floats(N * fs);
    dsu = c.arena.floats(N * fs);
    nn::swiglu_backward(s.sg, s.su, dsh, dsg, dsu, N * fs, cfg.clamp_shared_expert ? limit : 0.0f);
  }
  float* dye = dyg;
  if (P.active()) {
    c.pg.wait(hy);
    dye = c.arena.floats(Re * d);
    ep_to_expert_order(P, dyr, dye, d);
  }
  float* dwe = c.arena.floats(Re);  // gradient of each row's routing weight
  float* dxe = c.arena.floats(Re * d);
  const auto ew = expert_weights(c, b, e0, El);
  nn::experts_backward(ew, P.offsets.data(), {d, f, limit}, s.xe, s.we, s.g, s.u, s.h, dye, dxe, dwe, c.arena);
  // input and routing-weight gradients back to the tokens' ranks, overlapped with the shared expert's W1/W3
  // backward
  float *dxg = dxe, *dwl = dwe;  // [R_, d], [R_]: this rank's routed rows, expert order
  int hx = -1, hw_ = -1;
  if (P.active()) {
    float* dxs = c.arena.floats(Re * d);
    float* dws = c.arena.floats(Re);
    ep_from_expert_order(P, dxe, dxs, d);
    ep_from_expert_order(P, dwe, dws, 1);
    dxg = c.arena.floats(R_ * d);
    dwl = c.arena.floats(R_);
    hx = c.pg.start_all_to_all_rows(dxs, P.recv_rows, dxg, P.send_rows, d);
    hw_ = c.pg.start_all_to_all_rows(dws, P.recv_rows, dwl, P.send_rows, 1);
  }
  if (fs > 0) {
    nn::linear_backward(s.x, c.p(b.sw1), dsg, dx, c.g(b.sw1), N, fs, d, true, nullptr, s.x16);
    c.pg.progress();
    nn::linear_backward(s.x, c.p(b.sw3), dsu, dx, c.g(b.sw3), N, fs, d, true, nullptr, s.x16);
  }
  c.pg.wait(hx);
  c.pg.wait(hw_);
  float* dw = c.arena.floats(N * k);
  for (int64_t i = 0; i < N * k; ++i) dw[i] = dwl[s.row_of[i]];  // each (token, slot) has one row
  nn::moe_scatter_add_rows(s.row_of, N, k, d, dxg, dx);
  // router: weights w_i = R a_i / sum_sel a (+ balance loss on all affinities), then a = sqrt(softplus(s))
  float* ds = c.arena.floats(N * E);
  nn::moe_route_backward(s.s, s.a, s.sel, dw, N, E, k, R, !b.hash, seq.B, seq.T, cfg.seq_balance_alpha, ds);
  nn::linear_backward(s.x, c.p(b.gate), ds, dx, c.g(b.gate), N, E, d, true);
}

}  // namespace trex::model::detail
