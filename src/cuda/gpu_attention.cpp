// cuda::Model's attention of every layer kind (DEEPSEEK_V4.md §3-§5, §13, §16), model/attention.cpp's forward and
// backward on the device, step for step: the low-rank query with per-head weightless RMS, the shared K == V with
// RoPE, the token-level compressor (cuda/compressor.hpp around its products), the lightning indexer (scores,
// top-k, its detached KL loss and gradients: cuda/indexer.hpp, topk_rows), the joint softmax over window +
// compressed entries + sink (cuda/sparse_attention.hpp), the output de-rotation and the grouped low-rank output
// projection.
#include <algorithm>
#include <cmath>

#include "cuda/compressor.hpp"
#include "cuda/gpu_model_impl.hpp"
#include "cuda/indexer.hpp"
#include "cuda/model_glue.hpp"
#include "cuda/ops.hpp"
#include "cuda/sparse_attention.hpp"

namespace trex::cuda::gm {

namespace {

DeviceCompressorPool pool_args(const DeviceSeq& seq, const DeviceEntries& en, int64_t cdim, bool overlap) {
  DeviceCompressorPool p;
  p.N = seq.N;
  p.NE = en.NE;
  p.m = en.m;
  p.cdim = cdim;
  p.overlap = overlap;
  p.start = en.start;
  p.idx = en.idx;
  p.pos = seq.pos;
  return p;
}

// ------------------------------------------------------------------ token-level compressor (§4)
void compressor_forward(Ctx& c, const DeviceSeq& seq, const DeviceEntries& en, const float* x, const uint16_t* x16,
                        const CmpOff& off, int64_t cdim, bool overlap, const DeviceRope& rp, CmpSaved& s) {
  const int64_t N = seq.N, d = c.cfg.hidden_size, m = en.m, W = (overlap ? 2 : 1) * cdim;
  const int64_t slots = overlap ? 2 * m : m, NE = en.NE;
  s.x = x;
  s.x16 = x16;
  s.cdim = cdim;
  s.m = m;
  s.overlap = overlap;
  s.Cx = c.arena.floats(N * W);
  s.Zx = c.arena.floats(N * W);
  linear(c, x, x16, off.wkv, s.Cx, N, W, d);
  linear(c, x, x16, off.wgate, s.Zx, N, W, d);
  const DeviceCompressorPool pp = pool_args(seq, en, cdim, overlap);
  compressor_ape_add(pp, c.p(off.ape), s.Zx, c.s);
  s.S = c.arena.floats(std::max<int64_t>(1, NE * slots * cdim));
  s.pooled = c.arena.floats(std::max<int64_t>(1, NE * cdim));
  s.rstd = c.arena.floats(std::max<int64_t>(1, NE));
  s.out = c.arena.floats(std::max<int64_t>(1, NE * cdim));
  if (NE == 0) return;
  compressor_pool_forward(pp, s.Cx, s.Zx, s.S, s.pooled, c.s);
  rmsnorm_forward(s.pooled, c.p(off.norm), s.out, s.rstd, NE, cdim, float(c.cfg.rms_norm_eps), c.s);
  rope(s.out, NE, 1, cdim, en.epos, rp, false, c.s);
}

// dout [NE, cdim] is consumed (modified). dx may be null (a detached input: parameter gradients only).
void compressor_backward(Ctx& c, const DeviceSeq& seq, const DeviceEntries& en, const CmpOff& off,
                         const DeviceRope& rp, const CmpSaved& s, float* dout, float* dx) {
  const int64_t N = seq.N, d = c.cfg.hidden_size, cdim = s.cdim, W = (s.overlap ? 2 : 1) * cdim;
  const int64_t NE = en.NE;
  if (NE == 0) return;
  rope(dout, NE, 1, cdim, en.epos, rp, true, c.s);
  float* dpooled = c.arena.floats(NE * cdim);
  rmsnorm_backward(s.pooled, c.p(off.norm), s.rstd, dout, dpooled, c.g(off.norm), NE, cdim, false, c.arena, c.s);
  float* dCx = c.arena.floats(N * W);
  float* dZx = c.arena.floats(N * W);
  const DeviceCompressorPool pp = pool_args(seq, en, cdim, s.overlap);
  compressor_pool_backward(pp, s.Cx, s.S, s.pooled, dpooled, dCx, dZx, c.s);
  compressor_ape_backward(pp, dZx, c.g(off.ape), c.arena, c.s);
  linear_backward(c, s.x, s.x16, off.wkv, dCx, nullptr, dx, true, N, W, d);
  linear_backward(c, s.x, s.x16, off.wgate, dZx, nullptr, dx, true, N, W, d);
}

// ------------------------------------------------------------------ lightning indexer (§5, §16.5)
// The selections (always) and, in training, the KL loss's gradients into the indexer's parameters.
double indexer_forward(Ctx& c, const DeviceSeq& seq, const BlockOff& b, const float* xa, AttnSaved& s) {
  const ModelConfig& cfg = c.cfg;
  const int64_t N = seq.N, d = cfg.hidden_size, HI = cfg.index_n_heads, cI = cfg.index_head_dim;
  const int64_t qr = cfg.q_lora_rank, H = cfg.num_attention_heads, hd = cfg.head_dim, topk = cfg.index_topk;
  const DeviceEntries& en = seq.entries(4);
  const int64_t NE = en.NE;
  s.qI = c.arena.floats(N * HI * cI);
  linear(c, s.cq, nullptr, b.iwq_b, s.qI, N, HI * cI, qr);  // cq detached: no gradient flows back
  rope(s.qI, N, HI, cI, seq.pos, c.rope_b, false, c.s);
  compressor_forward(c, seq, en, xa, s.xa16, b.icmp, cI, true, c.rope_b, s.icmp);
  s.lam = c.arena.floats(N * HI);
  linear(c, xa, s.xa16, b.iwp, s.lam, N, HI, d);
  const float lam_scale = float(1.0 / std::sqrt(double(cI) * double(HI)));
  scale_in_place(s.lam, N * HI, lam_scale, c.s);
  const int64_t smax = std::max<int64_t>(1, en.max_nvis);
  DeviceIndexer ix;
  ix.N = N;
  ix.HI = HI;
  ix.cI = cI;
  ix.NE = NE;
  ix.smax = smax;
  ix.nvis = en.nvis;
  ix.base = en.base;
  ix.qI = s.qI;
  ix.lam = s.lam;
  ix.K = s.icmp.out;
  float* scores = c.arena.floats(N * smax);
  indexer_scores(ix, scores, c.s);
  s.sel = c.arena.ints(N * topk);
  topk_rows(scores, N, smax, smax, en.nvis, en.base, topk, s.sel, c.s);
  // The entries the KL loss (and the main attention) use: the top-k, or every visible entry in the dense warm-up
  // (s.comp: entry_lists built them, row stride max_nvis = smax when any entry exists).
  const bool dense = cfg.indexer_dense_warmup;
  DeviceIndexerKL kl;
  kl.H = H;
  kl.hd = hd;
  kl.q = s.q;
  kl.Ce = s.cmp.out;
  kl.sel = dense ? s.comp : s.sel;
  kl.kstride = dense ? smax : topk;
  kl.coeff = cfg.indexer_loss_coeff / double(seq.B * seq.T);
  float* dqI = c.arena.floats(N * HI * cI);
  float* dlam = c.arena.floats(N * HI);
  float* dK = c.arena.floats(std::max<int64_t>(1, NE * cI));
  double* row_loss = c.arena.doubles(N);
  indexer_kl(ix, kl, scores, row_loss, dqI, dlam, dK, c.arena, c.s);  // the gradients too (inference: unused)
  const double loss = sum_row_losses(row_loss, N, c.s) * kl.coeff;
  if (!c.training || !c.indexer_grads) return loss;  // inference, or a recomputed forward
  scale_in_place(dlam, N * HI, lam_scale, c.s);
  linear_backward(c, xa, s.xa16, b.iwp, dlam, nullptr, nullptr, false, N, HI, d);
  rope(dqI, N, HI, cI, seq.pos, c.rope_b, true, c.s);
  linear_backward(c, s.cq, nullptr, b.iwq_b, dqI, nullptr, nullptr, false, N, HI * cI, qr);
  compressor_backward(c, seq, en, b.icmp, c.rope_b, s.icmp, dK, nullptr);
  return loss;
}

DeviceSparseAttention attention_core(const Ctx& c, const DeviceSeq& seq, const BlockOff& b, const AttnSaved& s) {
  const ModelConfig& cfg = c.cfg;
  DeviceSparseAttention a;
  a.N = seq.N;
  a.H = cfg.num_attention_heads;
  a.hd = cfg.head_dim;
  a.window = cfg.sliding_window;
  a.NE = b.ratio != 0 ? seq.entries(b.ratio).NE : 0;
  a.cmax = s.cmax;
  a.q = s.q;
  a.kv = s.kv;
  a.C = b.ratio != 0 ? s.cmp.out : nullptr;
  a.ws = seq.ws;
  a.comp = s.comp;
  a.ncomp = s.ncomp;
  a.sink = c.p(b.sink);
  a.scale = float(1.0 / std::sqrt(double(cfg.head_dim)));
  return a;
}

// Each query's compressed entries in the order the softmax takes them (attention.cpp's loop): every visible entry
// (HCA, the dense warm-up), the indexer's selection (CSA: its -1 padding only ever trails, so the list is the
// selection itself and its length min(topk, visible)), or none (SWA). Built on the host from the host geometry.
void entry_lists(Ctx& c, const DeviceSeq& seq, const BlockOff& b, AttnSaved& s) {
  const ModelConfig& cfg = c.cfg;
  const int64_t N = seq.N;
  std::vector<int32_t> ncomp(size_t(N), 0);
  if (b.ratio == 0) {
    s.cmax = 0;
    s.comp = c.arena.ints(1);
  } else {
    const auto& en = *seq.entries(b.ratio).host;
    const bool all = b.kind == model::AttnKind::HCA || cfg.indexer_dense_warmup;
    if (all) {
      s.cmax = en.max_nvis;
      std::vector<int32_t> comp(size_t(std::max<int64_t>(1, N * s.cmax)), -1);
      for (int64_t i = 0; i < N; ++i) {
        ncomp[size_t(i)] = en.nvis[size_t(i)];
        for (int32_t e = 0; e < en.nvis[size_t(i)]; ++e) comp[size_t(i * s.cmax + e)] = en.base[size_t(i)] + e;
      }
      s.comp = to_device(c, comp);
    } else {
      s.cmax = cfg.index_topk;
      for (int64_t i = 0; i < N; ++i) ncomp[size_t(i)] = int32_t(std::min<int64_t>(cfg.index_topk, en.nvis[size_t(i)]));
      s.comp = nullptr;  // the selection, once the indexer has run
    }
  }
  s.ncomp = to_device(c, ncomp);
}

}  // namespace

// ------------------------------------------------------------------ attention forward
double attention_forward(Ctx& c, const DeviceSeq& seq, const BlockOff& b, const float* xa, AttnSaved& s, float* out) {
  const ModelConfig& cfg = c.cfg;
  const int64_t N = seq.N, d = cfg.hidden_size, H = cfg.num_attention_heads, hd = cfg.head_dim;
  const int64_t qr = cfg.q_lora_rank, G = cfg.o_groups, ro = cfg.o_lora_rank, w = cfg.sliding_window;
  const float eps = float(cfg.rms_norm_eps);
  const DeviceRope& rp = b.ratio == 0 ? c.rope_a : c.rope_b;
  s.xa = xa;
  s.xa16 = bf16_copy(c, xa, N * d);
  // query path
  s.cq_raw = c.arena.floats(N * qr);
  s.cq_rstd = c.arena.floats(N);
  s.cq = c.arena.floats(N * qr);
  linear(c, xa, s.xa16, b.wq_a, s.cq_raw, N, qr, d);
  rmsnorm_forward(s.cq_raw, c.p(b.q_norm), s.cq, s.cq_rstd, N, qr, eps, c.s);
  s.q_raw = c.arena.floats(N * H * hd);
  s.q_rstd = c.arena.floats(N * H);
  s.q = c.arena.floats(N * H * hd);
  linear(c, s.cq, nullptr, b.wq_b, s.q_raw, N, H * hd, qr);
  rmsnorm_forward(s.q_raw, nullptr, s.q, s.q_rstd, N * H, hd, eps, c.s);  // per-head weightless RMS
  rope(s.q, N, H, hd, seq.pos, rp, false, c.s);
  // shared K == V
  s.kv_raw = c.arena.floats(N * hd);
  s.kv_rstd = c.arena.floats(N);
  s.kv = c.arena.floats(N * hd);
  linear(c, xa, s.xa16, b.wkv, s.kv_raw, N, hd, d);
  rmsnorm_forward(s.kv_raw, c.p(b.kv_norm), s.kv, s.kv_rstd, N, hd, eps, c.s);
  rope(s.kv, N, 1, hd, seq.pos, rp, false, c.s);

  entry_lists(c, seq, b, s);
  double idx_loss = 0;
  if (b.ratio != 0) {
    const DeviceEntries& en = seq.entries(b.ratio);
    compressor_forward(c, seq, en, xa, s.xa16, b.cmp, hd, b.kind == model::AttnKind::CSA, rp, s.cmp);
    if (b.kind == model::AttnKind::CSA) {
      idx_loss = indexer_forward(c, seq, b, xa, s);
      if (!s.comp) s.comp = s.sel;
    }
  }
  s.kmax = w + s.cmax;
  s.P = c.arena.floats(N * H * s.kmax);
  s.o = c.arena.floats(N * H * hd);
  sparse_attention_forward(attention_core(c, seq, b, s), s.P, s.o, c.s);
  // output de-rotation, then the grouped low-rank projection
  s.od = c.arena.floats(N * H * hd);
  copy_async(s.od, s.o, sizeof(float) * size_t(N * H * hd), c.s);
  rope(s.od, N, H, hd, seq.pos, rp, true, c.s);
  s.od16 = bf16_copy(c, s.od, N * H * hd);
  const int64_t gw = H * hd / G;
  s.u = c.arena.floats(N * G * ro);
  for (int64_t g = 0; g < G; ++g)
    gemm(c, false, true, N, ro, gw, s.od + g * gw, s.od16 ? s.od16 + g * gw : nullptr, H * hd,
         c.p(b.wo_a) + g * ro * gw, c.p16(b.wo_a) ? c.p16(b.wo_a) + g * ro * gw : nullptr, gw, 0.0f, s.u + g * ro,
         G * ro);
  linear(c, s.u, nullptr, b.wo_b, out, N, d, G * ro);
  return idx_loss;
}

// ------------------------------------------------------------------ attention backward
void attention_backward(Ctx& c, const DeviceSeq& seq, const BlockOff& b, const AttnSaved& s, const float* dout,
                        float* dxa) {
  const ModelConfig& cfg = c.cfg;
  const int64_t N = seq.N, d = cfg.hidden_size, H = cfg.num_attention_heads, hd = cfg.head_dim;
  const int64_t qr = cfg.q_lora_rank, G = cfg.o_groups, ro = cfg.o_lora_rank;
  const DeviceRope& rp = b.ratio == 0 ? c.rope_a : c.rope_b;
  const int64_t gw = H * hd / G;
  // output projections
  float* du = c.arena.floats(N * G * ro);
  linear_backward(c, s.u, nullptr, b.wo_b, dout, nullptr, du, false, N, d, G * ro);
  const uint16_t* du16 = bf16_copy(c, du, N * G * ro);
  float* dod = c.arena.floats(N * H * hd);
  const uint16_t* woa16 = c.p16(b.wo_a);
  for (int64_t g = 0; g < G; ++g) {
    // dod_g = du_g A_g ; dA_g += du_g^T od_g
    gemm(c, false, false, N, gw, ro, du + g * ro, du16 ? du16 + g * ro : nullptr, G * ro, c.p(b.wo_a) + g * ro * gw,
         woa16 ? woa16 + g * ro * gw : nullptr, gw, 0.0f, dod + g * gw, H * hd);
    gemm(c, true, false, ro, gw, N, du + g * ro, du16 ? du16 + g * ro : nullptr, G * ro, s.od + g * gw,
         s.od16 ? s.od16 + g * gw : nullptr, H * hd, 1.0f, c.g(b.wo_a) + g * ro * gw, gw);
  }
  rope(dod, N, H, hd, seq.pos, rp, false, c.s);  // undo the de-rotation
  // joint softmax over window + compressed + sink
  const DeviceSparseAttention a = attention_core(c, seq, b, s);
  float* dq = c.arena.floats(N * H * hd);
  float* dkv = c.arena.floats(N * hd);
  float* dC = c.arena.floats(std::max<int64_t>(1, a.NE * hd));
  float* dsink = c.arena.floats(H);
  sparse_attention_backward(a, s.P, s.o, dod, dq, dkv, dC, dsink, c.arena, c.s);
  add_in_place(c.g(b.sink), dsink, H, c.s);
  // query path backward
  rope(dq, N, H, hd, seq.pos, rp, true, c.s);
  float* dq_raw = c.arena.floats(N * H * hd);
  rmsnorm_backward(s.q_raw, nullptr, s.q_rstd, dq, dq_raw, nullptr, N * H, hd, false, c.arena, c.s);
  float* dcq = c.arena.floats(N * qr);
  linear_backward(c, s.cq, nullptr, b.wq_b, dq_raw, nullptr, dcq, false, N, H * hd, qr);
  float* dcq_raw = c.arena.floats(N * qr);
  rmsnorm_backward(s.cq_raw, c.p(b.q_norm), s.cq_rstd, dcq, dcq_raw, c.g(b.q_norm), N, qr, false, c.arena, c.s);
  linear_backward(c, s.xa, s.xa16, b.wq_a, dcq_raw, nullptr, dxa, true, N, qr, d);
  // KV path backward
  rope(dkv, N, 1, hd, seq.pos, rp, true, c.s);
  float* dkv_raw = c.arena.floats(N * hd);
  rmsnorm_backward(s.kv_raw, c.p(b.kv_norm), s.kv_rstd, dkv, dkv_raw, c.g(b.kv_norm), N, hd, false, c.arena, c.s);
  linear_backward(c, s.xa, s.xa16, b.wkv, dkv_raw, nullptr, dxa, true, N, hd, d);
  // compressed entries (only the listed ones received gradient)
  if (b.ratio != 0) compressor_backward(c, seq, seq.entries(b.ratio), b.cmp, rp, s.cmp, dC, dxa);
}

}  // namespace trex::cuda::gm
