// Attention of every layer kind (DEEPSEEK_V4.md §3-§5, §13, §16): low-rank query with per-head weightless RMS,
// shared K == V with RoPE, token-level compressor (HCA / overlapping CSA), lightning indexer with top-k and its
// detached KL loss, one joint softmax over window + compressed entries + sink, output de-rotation and the grouped
// low-rank output projection. Forward and backward.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "model/model_impl.hpp"
#include "nn/gemm.hpp"
#include "nn/attention_vec.hpp"
#include "nn/compressor_pool.hpp"
#include "nn/gemm_bf16.hpp"
#include "nn/indexer.hpp"
#include "nn/sparse_attention.hpp"

namespace trex::model::detail {

namespace {

// ------------------------------------------------------------------ per-key vector helpers (nn/attention_vec.hpp)
using nn::attn_vec::dot;

// ------------------------------------------------------------------ token-level compressor (§4)
// The pooling's arguments (nn/compressor_pool.hpp): the batch's entry grid for ratio en.m.
nn::CompressorPool pool_args(const Seq& seq, const Entries& en, int64_t cdim, bool overlap) {
  nn::CompressorPool p;
  p.N = seq.N, p.NE = en.NE, p.m = en.m, p.cdim = cdim, p.overlap = overlap;
  p.start = en.start.data(), p.idx = en.idx.data(), p.pos = seq.pos.data();
  return p;
}

void compressor_forward(Ctx& c, const Seq& seq, const Entries& en, const float* x, const uint16_t* x16,
                        const CmpOff& off, int64_t cdim, bool overlap, const nn::RopeTable& rope, CmpSaved& s) {
  const int64_t N = seq.N, d = c.cfg.hidden_size, m = en.m, W = (overlap ? 2 : 1) * cdim;
  const int64_t slots = overlap ? 2 * m : m, NE = en.NE;
  s.x = x;
  s.x16 = x16;
  s.cdim = cdim;
  s.m = m;
  s.overlap = overlap;
  s.Cx = c.arena.floats(N * W);
  s.Zx = c.arena.floats(N * W);
  nn::linear(x, c.p(off.wkv), s.Cx, N, W, d, false, x16);
  nn::linear(x, c.p(off.wgate), s.Zx, N, W, d, false, x16);
  const nn::CompressorPool pool = pool_args(seq, en, cdim, overlap);
  nn::compressor_ape_add(pool, c.p(off.ape), s.Zx);
  s.S = c.arena.zeros(std::max<int64_t>(1, NE * slots * cdim));
  s.pooled = c.arena.floats(std::max<int64_t>(1, NE * cdim));
  s.rstd = c.arena.floats(std::max<int64_t>(1, NE));
  s.out = c.arena.floats(std::max<int64_t>(1, NE * cdim));
  nn::compressor_pool_forward(pool, s.Cx, s.Zx, s.S, s.pooled);
  if (NE > 0) {
    nn::rmsnorm_forward(s.pooled, c.p(off.norm), s.out, s.rstd, NE, cdim, float(c.cfg.rms_norm_eps));
    nn::rope_apply(s.out, NE, 1, cdim, en.epos.data(), rope, false);
  }
}

// dout [NE, cdim] is consumed (modified). dx may be null (detached input: parameter gradients only).
void compressor_backward(Ctx& c, const Seq& seq, const Entries& en, const CmpOff& off, const nn::RopeTable& rope,
                         const CmpSaved& s, float* dout, float* dx) {
  const int64_t N = seq.N, d = c.cfg.hidden_size, cdim = s.cdim, W = (s.overlap ? 2 : 1) * cdim, NE = en.NE;
  if (NE == 0) return;
  nn::rope_apply(dout, NE, 1, cdim, en.epos.data(), rope, true);
  float* dpooled = c.arena.floats(NE * cdim);
  nn::rmsnorm_backward(s.pooled, c.p(off.norm), s.rstd, dout, dpooled, c.g(off.norm), NE, cdim, false);
  float* dCx = c.arena.zeros(N * W);  // nn::compressor_pool_backward writes only what some entry reads
  float* dZx = c.arena.zeros(N * W);
  const nn::CompressorPool pool = pool_args(seq, en, cdim, s.overlap);
  nn::compressor_pool_backward(pool, s.Cx, s.S, s.pooled, dpooled, dCx, dZx);
  nn::compressor_ape_backward(pool, dZx, c.g(off.ape));
  nn::linear_backward(s.x, c.p(off.wkv), dCx, dx, c.g(off.wkv), N, W, d, true, nullptr, s.x16);
  nn::linear_backward(s.x, c.p(off.wgate), dZx, dx, c.g(off.wgate), N, W, d, true, nullptr, s.x16);
}

// ------------------------------------------------------------------ lightning indexer (§5, §16.5)
// Computes the selections (always) and, in training, the KL loss and the indexer's parameter gradients.
double indexer_forward(Ctx& c, const Seq& seq, const BlockOff& b, const float* xa, AttnSaved& s) {
  const ModelConfig& cfg = c.cfg;
  const int64_t N = seq.N, d = cfg.hidden_size, HI = cfg.index_n_heads, cI = cfg.index_head_dim;
  const int64_t qr = cfg.q_lora_rank, H = cfg.num_attention_heads, hd = cfg.head_dim, topk = cfg.index_topk;
  const Entries& en = seq.entries(4);
  const int64_t NE = en.NE;
  s.qI = c.arena.floats(N * HI * cI);
  nn::linear(s.cq, c.p(b.iwq_b), s.qI, N, HI * cI, qr);  // cq detached: no gradient flows back
  nn::rope_apply(s.qI, N, HI, cI, seq.pos.data(), c.rope_b, false);
  compressor_forward(c, seq, en, xa, s.xa16, b.icmp, cI, true, c.rope_b, s.icmp);
  s.lam = c.arena.floats(N * HI);
  nn::linear(xa, c.p(b.iwp), s.lam, N, HI, d, false, s.xa16);
  const float lam_scale = float(1.0 / std::sqrt(double(cI) * double(HI)));
  for (int64_t i = 0; i < N * HI; ++i) s.lam[i] *= lam_scale;
  s.sel = c.arena.ints(N * topk);
  const int64_t smax = std::max<int64_t>(1, en.max_nvis);
  float* scores = c.arena.floats(N * smax);
  nn::Indexer ix;
  ix.N = N, ix.HI = HI, ix.cI = cI, ix.NE = NE, ix.smax = smax;
  ix.nvis = en.nvis.data(), ix.base = en.base.data(), ix.qI = s.qI, ix.lam = s.lam, ix.K = s.icmp.out;
  nn::indexer_scores(ix, scores);
  nn::indexer_select(ix, scores, topk, s.sel);
  // The entries the KL loss (and the main attention) use: the top-k, or every visible entry in the dense
  // warm-up.
  const bool dense = cfg.indexer_dense_warmup;
  nn::IndexerKL kl;
  kl.H = H, kl.hd = hd, kl.q = s.q, kl.Ce = s.cmp.out;
  kl.kstride = dense ? smax : topk;
  kl.sel = s.sel;
  if (dense) {
    int32_t* all = c.arena.ints(N * smax);
    nn::indexer_dense_sel(ix, all);
    kl.sel = all;
  }
  // KL(p || softmax(I at top-k)); p from the detached main q and compressed entries (no window, no sink).
  kl.coeff = cfg.indexer_loss_coeff / double(seq.B * seq.T);
  float* dqI = c.arena.floats(N * HI * cI);
  float* dlam = c.arena.floats(N * HI);
  float* dK = nullptr;
  const double loss = nn::indexer_kl(ix, kl, scores, dqI, dlam, &dK, c.arena, c.nthreads, c.training);
  if (!c.training || !c.indexer_grads) return loss;  // inference, or a recomputed forward: the loss value only
  for (int64_t i = 0; i < N * HI; ++i) dlam[i] *= lam_scale;
  nn::linear_backward(xa, c.p(b.iwp), dlam, nullptr, c.g(b.iwp), N, HI, d, false, nullptr, s.xa16);
  nn::rope_apply(dqI, N, HI, cI, seq.pos.data(), c.rope_b, true);
  nn::linear_backward(s.cq, c.p(b.iwq_b), dqI, nullptr, c.g(b.iwq_b), N, HI * cI, qr);
  compressor_backward(c, seq, en, b.icmp, c.rope_b, s.icmp, dK, nullptr);
  return loss;
}

// Each query's first window key: its document's start or the window's, whichever is later.
const int32_t* window_starts(Ctx& c, const Seq& seq, int64_t w) {
  int32_t* ws = c.arena.ints(seq.N);
  for (int64_t i = 0; i < seq.N; ++i) ws[i] = int32_t(std::max<int64_t>(seq.doc_start[size_t(i)], i - w + 1));
  return ws;
}

// The joint softmax's arguments (nn/sparse_attention.hpp) from the saved activations.
nn::SparseAttention attention_core(const Ctx& c, const Seq& seq, const BlockOff& b, const AttnSaved& s) {
  const ModelConfig& cfg = c.cfg;
  nn::SparseAttention a;
  a.N = seq.N;
  a.H = cfg.num_attention_heads;
  a.hd = cfg.head_dim;
  a.window = cfg.sliding_window;
  a.NE = b.ratio != 0 ? seq.entries(b.ratio).NE : 0;
  a.cmax = s.cmax;
  a.q = s.q;
  a.kv = s.kv;
  a.C = b.ratio != 0 ? s.cmp.out : nullptr;
  a.ws = s.ws;
  a.comp = s.comp;
  a.ncomp = s.ncomp;
  a.sink = c.p(b.sink);
  a.scale = float(1.0 / std::sqrt(double(cfg.head_dim)));
  return a;
}

}  // namespace

// ------------------------------------------------------------------ attention forward
double attention_forward(Ctx& c, const Seq& seq, const BlockOff& b, const float* xa, AttnSaved& s, float* out) {
  const ModelConfig& cfg = c.cfg;
  const int64_t N = seq.N, d = cfg.hidden_size, H = cfg.num_attention_heads, hd = cfg.head_dim;
  const int64_t qr = cfg.q_lora_rank, G = cfg.o_groups, ro = cfg.o_lora_rank, w = cfg.sliding_window;
  const float eps = float(cfg.rms_norm_eps);
  const nn::RopeTable& rope = b.ratio == 0 ? c.rope_a : c.rope_b;
  s.xa = xa;
  s.xa16 = nn::bf16_operand_copies() ? bf16_copy(c, xa, N * d) : nullptr;
  // query path
  s.cq_raw = c.arena.floats(N * qr);
  s.cq_rstd = c.arena.floats(N);
  s.cq = c.arena.floats(N * qr);
  nn::linear(xa, c.p(b.wq_a), s.cq_raw, N, qr, d, false, s.xa16);
  nn::rmsnorm_forward(s.cq_raw, c.p(b.q_norm), s.cq, s.cq_rstd, N, qr, eps);
  s.q_raw = c.arena.floats(N * H * hd);
  s.q_rstd = c.arena.floats(N * H);
  s.q = c.arena.floats(N * H * hd);
  nn::linear(s.cq, c.p(b.wq_b), s.q_raw, N, H * hd, qr);
  nn::rmsnorm_forward(s.q_raw, nullptr, s.q, s.q_rstd, N * H, hd, eps);  // per-head weightless RMS
  nn::rope_apply(s.q, N, H, hd, seq.pos.data(), rope, false);
  // shared K == V
  s.kv_raw = c.arena.floats(N * hd);
  s.kv_rstd = c.arena.floats(N);
  s.kv = c.arena.floats(N * hd);
  nn::linear(xa, c.p(b.wkv), s.kv_raw, N, hd, d, false, s.xa16);
  nn::rmsnorm_forward(s.kv_raw, c.p(b.kv_norm), s.kv, s.kv_rstd, N, hd, eps);
  nn::rope_apply(s.kv, N, 1, hd, seq.pos.data(), rope, false);

  double idx_loss = 0;
  const Entries* en = nullptr;
  s.cmax = 0;
  if (b.ratio != 0) {
    en = &seq.entries(b.ratio);
    compressor_forward(c, seq, *en, xa, s.xa16, b.cmp, hd, b.kind == AttnKind::CSA, rope, s.cmp);
    if (b.kind == AttnKind::CSA) {
      idx_loss = indexer_forward(c, seq, b, xa, s);
      s.cmax = cfg.indexer_dense_warmup ? en->max_nvis : cfg.index_topk;
    } else {
      s.cmax = en->max_nvis;
    }
  }
  s.kmax = w + s.cmax;
  s.ncomp = c.arena.ints(N);
  s.comp = c.arena.ints(std::max<int64_t>(1, N * s.cmax));
  s.P = c.arena.floats(N * H * s.kmax);
  s.o = c.arena.floats(N * H * hd);
  s.ws = window_starts(c, seq, w);  // kept for the backward
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < N; ++i) {  // each query's compressed entries, in the order the softmax takes them
    int32_t* comp = s.comp + i * s.cmax;
    int32_t nc = 0;
    if (b.kind == AttnKind::HCA || (b.kind == AttnKind::CSA && cfg.indexer_dense_warmup)) {
      for (int32_t e = 0; e < en->nvis[size_t(i)]; ++e) comp[nc++] = en->base[size_t(i)] + e;
    } else if (b.kind == AttnKind::CSA) {
      for (int64_t j = 0; j < cfg.index_topk; ++j)
        if (s.sel[i * cfg.index_topk + j] >= 0) comp[nc++] = s.sel[i * cfg.index_topk + j];
    }
    s.ncomp[i] = nc;
  }
  nn::sparse_attention_forward(attention_core(c, seq, b, s), s.P, s.o);
  // output de-rotation, then the grouped low-rank projection
  s.od = c.arena.floats(N * H * hd);
  std::memcpy(s.od, s.o, size_t(N * H * hd) * sizeof(float));
  nn::rope_apply(s.od, N, H, hd, seq.pos.data(), rope, true);
  const int64_t gw = H * hd / G;
  s.u = c.arena.floats(N * G * ro);
  for (int64_t g = 0; g < G; ++g)
    nn::gemm(false, true, N, ro, gw, 1.0f, s.od + g * gw, H * hd, c.p(b.wo_a) + g * ro * gw, gw, 0.0f, s.u + g * ro,
             G * ro);
  nn::linear(s.u, c.p(b.wo_b), out, N, d, G * ro);
  return idx_loss;
}

// ------------------------------------------------------------------ attention backward
void attention_backward(Ctx& c, const Seq& seq, const BlockOff& b, const AttnSaved& s, const float* dout,
                        float* dxa) {
  const ModelConfig& cfg = c.cfg;
  const int64_t N = seq.N, d = cfg.hidden_size, H = cfg.num_attention_heads, hd = cfg.head_dim;
  const int64_t qr = cfg.q_lora_rank, G = cfg.o_groups, ro = cfg.o_lora_rank;
  const nn::RopeTable& rope = b.ratio == 0 ? c.rope_a : c.rope_b;
  const int64_t gw = H * hd / G;
  // output projections
  float* du = c.arena.floats(N * G * ro);
  nn::linear_backward(s.u, c.p(b.wo_b), dout, du, c.g(b.wo_b), N, d, G * ro);
  float* dod = c.arena.floats(N * H * hd);
  for (int64_t g = 0; g < G; ++g) {
    // dod_g = du_g A_g ; dA_g += du_gᵀ od_g
    nn::gemm(false, false, N, gw, ro, 1.0f, du + g * ro, G * ro, c.p(b.wo_a) + g * ro * gw, gw, 0.0f, dod + g * gw,
             H * hd);
    nn::gemm(true, false, ro, gw, N, 1.0f, du + g * ro, G * ro, s.od + g * gw, H * hd, 1.0f,
             c.g(b.wo_a) + g * ro * gw, gw);
  }
  nn::rope_apply(dod, N, H, hd, seq.pos.data(), rope, false);  // undo the de-rotation
  // joint softmax over window + compressed + sink
  const Entries* en = b.ratio != 0 ? &seq.entries(b.ratio) : nullptr;
  float* dq = c.arena.floats(N * H * hd);
  const nn::SparseAttentionGrads kg = nn::sparse_attention_backward(
      attention_core(c, seq, b, s), s.P, s.o, dod, dq, c.arena, c.nthreads);
  float* dkv = kg.dkv;
  float* dC = kg.dC;
  float* dsink = kg.dsink;
  for (int64_t h = 0; h < H; ++h) c.g(b.sink)[h] += dsink[h];
  // query path backward
  nn::rope_apply(dq, N, H, hd, seq.pos.data(), rope, true);
  float* dq_raw = c.arena.floats(N * H * hd);
  nn::rmsnorm_backward(s.q_raw, nullptr, s.q_rstd, dq, dq_raw, nullptr, N * H, hd, false);
  float* dcq = c.arena.floats(N * qr);
  nn::linear_backward(s.cq, c.p(b.wq_b), dq_raw, dcq, c.g(b.wq_b), N, H * hd, qr);
  float* dcq_raw = c.arena.floats(N * qr);
  nn::rmsnorm_backward(s.cq_raw, c.p(b.q_norm), s.cq_rstd, dcq, dcq_raw, c.g(b.q_norm), N, qr, false);
  nn::linear_backward(s.xa, c.p(b.wq_a), dcq_raw, dxa, c.g(b.wq_a), N, qr, d, true, nullptr, s.xa16);
  // KV path backward
  nn::rope_apply(dkv, N, 1, hd, seq.pos.data(), rope, true);
  float* dkv_raw = c.arena.floats(N * hd);
  nn::rmsnorm_backward(s.kv_raw, c.p(b.kv_norm), s.kv_rstd, dkv, dkv_raw, c.g(b.kv_norm), N, hd, false);
  nn::linear_backward(s.xa, c.p(b.wkv), dkv_raw, dxa, c.g(b.wkv), N, hd, d, true, nullptr, s.xa16);
  // compressed entries (only the selected ones received gradient)
  if (b.ratio != 0) compressor_backward(c, seq, *en, b.cmp, rope, s.cmp, dC, dxa);
}

}  // namespace trex::model::detail
