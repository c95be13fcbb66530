// cuda::Model's MoE block (DEEPSEEK_V4.md §7, §13, §16.6-16.7), model/moe.cpp's forward and backward on the
// device, one process (no expert parallelism yet): the router product, routing and grouping (cuda/moe_route.hpp),
// the per-expert counts to the host (the block's one synchronisation: they size the expert products), the routed
// experts (cuda/experts.hpp), the shared expert, the combine and the sequence-balance loss.
#include "cuda/gpu_model_impl.hpp"
#include "cuda/moe_route.hpp"
#include "cuda/ops.hpp"

namespace trex::cuda::gm {

double moe_forward(Ctx& c, const DeviceSeq& seq, const BlockOff& b, const DeviceExpertWeights* experts,
                   const float* x, MoeSaved& s, float* out) {
  const ModelConfig& cfg = c.cfg;
  const int64_t N = seq.N, d = cfg.hidden_size, E = cfg.n_routed_experts, k = cfg.num_experts_per_tok;
  const int64_t f = cfg.moe_intermediate_size, fs = f * cfg.n_shared_experts;
  const float R = float(cfg.routed_scaling_factor), limit = float(cfg.swiglu_limit);
  s.x = x;
  s.x16 = bf16_copy(c, x, N * d);  // read by the router and the shared expert's two products
  s.s = c.arena.floats(N * E);
  s.a = c.arena.floats(N * E);
  s.w = c.arena.floats(N * k);
  s.sel = c.arena.ints(N * k);
  linear(c, x, s.x16, b.gate, s.s, N, E, d);
  const float* bias = b.gate_bias >= 0 ? c.p(b.gate_bias) : nullptr;
  const int64_t* tid2eid = b.hash ? c.tid2eid(b) : nullptr;
  moe_route_forward(s.s, b.hash ? nullptr : bias, tid2eid, seq.tokens, N, E, k, R, s.a, s.sel, s.w, c.s);
  int64_t* counts_d = reinterpret_cast<int64_t*>(c.arena.raw(sizeof(int64_t) * size_t(E)));
  int64_t* offsets_d = reinterpret_cast<int64_t*>(c.arena.raw(sizeof(int64_t) * size_t(E + 1)));
  s.order_tok = c.arena.ints(N * k);
  s.order_slot = c.arena.ints(N * k);
  s.row_of = c.arena.ints(N * k);
  moe_group_rows(s.sel, N, E, k, counts_d, offsets_d, s.order_tok, s.order_slot, s.row_of, c.arena, c.s);
  s.counts.assign(size_t(E), 0);
  moe_counts_to_host(counts_d, E, s.counts.data(), c.s);
  s.offsets.assign(size_t(E) + 1, 0);
  for (int64_t e = 0; e < E; ++e) s.offsets[size_t(e) + 1] = s.offsets[size_t(e)] + s.counts[size_t(e)];
  const int64_t rows = N * k;
  s.xg = c.arena.floats(rows * d);
  s.wl = c.arena.floats(rows);
  moe_gather_rows(x, s.w, s.order_tok, s.order_slot, rows, k, d, s.xg, s.wl, c.s);
  if (fs > 0) {
    s.sg = c.arena.floats(N * fs);
    s.su = c.arena.floats(N * fs);
    s.sh = c.arena.floats(N * fs);
    linear(c, x, s.x16, b.sw1, s.sg, N, fs, d);
    linear(c, x, s.x16, b.sw3, s.su, N, fs, d);
    swiglu_forward(s.sg, s.su, s.sh, N * fs, cfg.clamp_shared_expert ? limit : 0.0f, c.s);
  }
  s.g = c.arena.floats(rows * f);
  s.u = c.arena.floats(rows * f);
  s.h = c.arena.floats(rows * f);
  float* ye = c.arena.floats(rows * d);
  experts_forward(c.blas, c.type, experts, E, s.offsets.data(), {d, f, limit}, s.xg, s.wl, s.g, s.u, s.h, ye, c.arena,
                  c.s);
  if (fs > 0)
    linear(c, s.sh, nullptr, b.sw2, out, N, d, fs);
  else
    zero_async(out, sizeof(float) * size_t(N * d), c.s);
  moe_scatter_add_rows(s.row_of, N, k, d, ye, out, c.s);
  s.seq_counts = nullptr;
  if (b.hash || !c.balance_loss) return 0.0;  // (the decoder: no loss to report, and no synchronisation for it)
  double* row_loss = c.arena.doubles(seq.B);
  s.seq_counts = c.arena.ints(seq.B * E);
  moe_balance_loss(s.a, s.sel, seq.B, seq.T, E, k, cfg.seq_balance_alpha, row_loss, s.seq_counts, c.arena, c.s);
  return sum_row_losses(row_loss, seq.B, c.s);
}

void moe_backward(Ctx& c, const DeviceSeq& seq, const BlockOff& b, const DeviceExpertWeights* experts,
                  const MoeSaved& s, const float* dout, float* dx) {
  const ModelConfig& cfg = c.cfg;
  const int64_t N = seq.N, d = cfg.hidden_size, E = cfg.n_routed_experts, k = cfg.num_experts_per_tok;
  const int64_t f = cfg.moe_intermediate_size, fs = f * cfg.n_shared_experts;
  const float R = float(cfg.routed_scaling_factor), limit = float(cfg.swiglu_limit);
  const int64_t rows = N * k;
  float* dyg = c.arena.floats(rows * d);
  moe_gather_rows(dout, nullptr, s.order_tok, s.order_slot, rows, k, d, dyg, nullptr, c.s);
  float *dsg = nullptr, *dsu = nullptr;
  if (fs > 0) {
    float* dsh = c.arena.floats(N * fs);
    linear_backward(c, s.sh, nullptr, b.sw2, dout, nullptr, dsh, false, N, d, fs);
    dsg = c.arena.floats(N * fs);
    dsu = c.arena.floats(N * fs);
    swiglu_backward(s.sg, s.su, dsh, dsg, dsu, N * fs, cfg.clamp_shared_expert ? limit : 0.0f, c.s);
  }
  float* dwe = c.arena.floats(rows);
  float* dxe = c.arena.floats(rows * d);
  experts_backward(c.blas, c.type, experts, E, s.offsets.data(), {d, f, limit}, s.xg, s.wl, s.g, s.u, s.h, dyg, dxe,
                   dwe, c.arena, c.s);
  if (fs > 0) {
    linear_backward(c, s.x, s.x16, b.sw1, dsg, nullptr, dx, true, N, fs, d);
    linear_backward(c, s.x, s.x16, b.sw3, dsu, nullptr, dx, true, N, fs, d);
  }
  moe_scatter_add_rows(s.row_of, N, k, d, dxe, dx, c.s);
  float* ds = c.arena.floats(N * E);
  moe_route_backward(s.s, s.a, s.sel, dwe, s.row_of, b.hash ? nullptr : s.seq_counts, N, E, k, R, seq.B, seq.T,
                     cfg.seq_balance_alpha, ds, c.s);
  linear_backward(c, s.x, s.x16, b.gate, ds, nullptr, dx, true, N, E, d);
}

}  // namespace trex::cuda::gm
