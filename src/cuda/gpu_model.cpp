// cuda::Model: the device buffers (parameters, gradients, bf16 copies, the hash tables, each expert's weight
// pointers), the per-batch geometry upload, and the whole forward/backward — embedding, blocks, collapse head,
// final norm, LM head, cross-entropy, MTP modules — model/model.cpp's forward_range / backward_range on the device,
// step for step (the whole layer range; under expert parallelism this rank's routed experts, gpu_moe.cpp).
#include "cuda/gpu_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "cuda/device.hpp"
#include "cuda/gpu_model_impl.hpp"
#include "cuda/model_glue.hpp"
#include "cuda/ops.hpp"
#include "cuda/stream.hpp"
#include "nn/ops.hpp"
#include "util/error.hpp"

namespace trex::cuda {

using namespace gm;
using model::Batch;
using model::Losses;

namespace {

struct MtpOff {
  int64_t e_proj, h_proj, enorm, hnorm, norm;
  HcOff hc_head;
};

struct MtpSaved {
  int64_t Tm = 0, Nm = 0, count = 0;
  float *Xin, *hn, *hn_rstd, *e, *en, *en_rstd, *Xm;
  HcSaved head;
  float *h, *fn, *fn_rstd, *logits, *dlogits;
  uint16_t* dlogits16;
  const int32_t* etok = nullptr;  // [Nm] device tokens whose embeddings enter the module
  std::vector<int32_t> etok_host;
};

}  // namespace

struct Model::Impl {
  model::ModelConfig cfg;
  ModelOptions opt;
  model::ParamStore host;  // table + checkpoint copy (no host gradients: download_grads fills the caller's)
  std::vector<BlockOff> blocks;
  std::vector<int64_t> ratios;
  std::vector<MtpOff> mtp_off;
  int64_t embed = -1, head = -1, norm = -1;
  HcOff hc_head;
  int64_t numel = 0;
  int64_t stage_first = 0, stage_end = 0;  // this rank's layers [stage_first, stage_end) (one stage: 0, L)

  DeviceBuffer P, G, P16, Pint;
  std::vector<std::vector<DeviceExpertWeights>> experts;  // per block: this rank's experts (all in one process)
  model::ProcessGroup* ep_group = nullptr;  // expert parallelism: the ep ranks (null: every expert here)
  MoeHostBuffers moe_host;                  // the MoE blocks' host buffers, allocated on first need
  Stream stream;
  Blas blas;
  std::unique_ptr<DeviceArena> arena;
  DeviceRopeTable rope_a, rope_b;
  int64_t rope_len = 0;
  std::vector<std::vector<int64_t>> load;

  // per-step state
  model::detail::Seq seq_host;
  std::vector<model::detail::Seq> mseq_host;
  DeviceSeq seq;
  std::vector<DeviceSeq> mseq;
  std::vector<BlockSaved> saved;
  std::vector<MtpSaved> mtp;
  HcSaved head_saved;
  float *X0 = nullptr, *h = nullptr, *hn = nullptr, *hn_rstd = nullptr, *logits = nullptr, *dlogits = nullptr;
  uint16_t* dlogits16 = nullptr;
  const float* Xout = nullptr;
  std::vector<int32_t> tokens_host;
  int64_t fwd_first = 0, fwd_last = 0;  // the layers of the last forward (its backward runs over them)
  bool has_forward = false;             // a forward's activations are in the arena (a backward may follow)

  // Does this rank run block bi (layers, then MTP blocks, which belong to the last stage)?
  bool runs_block(size_t bi) const {
    const int64_t l = int64_t(bi);
    return l < cfg.num_hidden_layers ? l >= stage_first && l < stage_end : stage_end == cfg.num_hidden_layers;
  }

  Impl(const model::ModelConfig& c, const ModelOptions& o)
      : cfg(c), opt(o), host(c, o.placement, /*with_grads=*/false) {}

  Ctx ctx(bool training) {
    Ctx c{cfg,
               P.as<float>(),
               G.as<float>(),
               opt.matmul == GemmType::bf16 ? P16.as<uint16_t>() : nullptr,
               Pint.as<int64_t>(),
               host.int_params().data(),
               blas,
               *arena,
               stream.get(),
               opt.matmul,
               training,
               rope_a.view(),
               rope_b.view()};
    c.ep_group = ep_group;
    c.moe_host = &moe_host;
    return c;
  }
};

namespace {

// The host geometry's arrays in the step arena.
DeviceSeq upload_seq(Ctx& c, const model::detail::Seq& sq, const int32_t* tokens_device) {
  DeviceSeq d;
  d.host = &sq;
  d.B = sq.B;
  d.T = sq.T;
  d.N = sq.N;
  d.pos = to_device(c, sq.pos);
  std::vector<int32_t> ws(size_t(sq.N));
  for (int64_t i = 0; i < sq.N; ++i)
    ws[size_t(i)] = int32_t(std::max<int64_t>(sq.doc_start[size_t(i)], i - c.cfg.sliding_window + 1));
  d.ws = to_device(c, ws);
  d.tokens = tokens_device;
  for (const auto& e : sq.ents) {
    DeviceEntries de;
    de.m = e.m;
    de.NE = e.NE;
    de.max_nvis = e.max_nvis;
    de.start = to_device(c, e.start);
    de.idx = to_device(c, e.idx);
    de.epos = to_device(c, e.epos);
    de.base = to_device(c, e.base);
    de.nvis = to_device(c, e.nvis);
    de.host = &e;
    d.ents.push_back(de);
  }
  return d;
}

double block_forward(Ctx& c, const DeviceSeq& seq, const BlockOff& b, const DeviceExpertWeights* experts,
                     const float* X, BlockSaved& s, double* idx_loss) {
  const int64_t N = seq.N, d = c.cfg.hidden_size, n = c.cfg.hc_mult;
  const float eps = float(c.cfg.rms_norm_eps);
  s.ya = c.arena.floats(N * d);
  hc_pre_forward(c, X, N, b.hc_attn, s.hca, s.ya);
  s.ya_rstd = c.arena.floats(N);
  s.xa = c.arena.floats(N * d);
  rmsnorm_forward(s.ya, c.p(b.attn_norm), s.xa, s.ya_rstd, N, d, eps, c.s);
  s.attn_out = c.arena.floats(N * d);
  *idx_loss += attention_forward(c, seq, b, s.xa, s.at, s.attn_out);
  s.Xmid = c.arena.floats(N * n * d);
  hc_post_forward(c, s.attn_out, X, s.hca, N, s.Xmid);
  s.yf = c.arena.floats(N * d);
  hc_pre_forward(c, s.Xmid, N, b.hc_ffn, s.hcf, s.yf);
  s.yf_rstd = c.arena.floats(N);
  s.xf = c.arena.floats(N * d);
  rmsnorm_forward(s.yf, c.p(b.ffn_norm), s.xf, s.yf_rstd, N, d, eps, c.s);
  s.ffn_out = c.arena.floats(N * d);
  const double bal = moe_forward(c, seq, b, experts, s.xf, s.moe, s.ffn_out);
  s.Xout = c.arena.floats(N * n * d);
  hc_post_forward(c, s.ffn_out, s.Xmid, s.hcf, N, s.Xout);
  return bal;
}

// dXout: gradient wrt the block output; dX (zeroed by the caller) receives the gradient wrt the block input.
void block_backward(Ctx& c, const DeviceSeq& seq, const BlockOff& b, const DeviceExpertWeights* experts,
                    const float* X, const BlockSaved& s, const float* dXout, float* dX) {
  const int64_t N = seq.N, d = c.cfg.hidden_size, n = c.cfg.hc_mult;
  float* dXmid = c.arena.floats(N * n * d);
  zero_async(dXmid, sizeof(float) * size_t(N * n * d), c.s);
  float* dF = c.arena.floats(N * d);
  float* dpost = c.arena.floats(N * n);
  float* dM = c.arena.floats(N * n * n);
  hc_post_backward(c, s.ffn_out, s.Xmid, s.hcf, N, dXout, dF, dpost, dM, dXmid);
  float* dxf = c.arena.floats(N * d);
  zero_async(dxf, sizeof(float) * size_t(N * d), c.s);
  moe_backward(c, seq, b, experts, s.moe, dF, dxf);
  float* dyf = c.arena.floats(N * d);
  rmsnorm_backward(s.yf, c.p(b.ffn_norm), s.yf_rstd, dxf, dyf, c.g(b.ffn_norm), N, d, false, c.arena, c.s);
  hc_pre_backward(c, N, b.hc_ffn, s.hcf, dyf, dpost, dM, dXmid);
  hc_post_backward(c, s.attn_out, X, s.hca, N, dXmid, dF, dpost, dM, dX);
  float* dxa = c.arena.floats(N * d);
  zero_async(dxa, sizeof(float) * size_t(N * d), c.s);
  attention_backward(c, seq, b, s.at, dF, dxa);
  float* dya = c.arena.floats(N * d);
  rmsnorm_backward(s.ya, c.p(b.attn_norm), s.ya_rstd, dxa, dya, c.g(b.attn_norm), N, d, false, c.arena, c.s);
  hc_pre_backward(c, N, b.hc_attn, s.hca, dya, dpost, dM, dX);
}

// The cross-entropy of one head: loss (the scale included) and, in training, its gradient (bf16 products: only the
// rounded copy, as the CPU keeps it).
double head_xent(Ctx& c, const float* logits, const int32_t* tgt, int64_t rows, float scale, float** dlogits,
                 uint16_t** dlogits16) {
  const int64_t V = c.cfg.vocab_size;
  *dlogits = nullptr;
  *dlogits16 = nullptr;
  if (c.bf16())
    *dlogits16 = c.arena.bf16s(rows * V);
  else
    *dlogits = c.arena.floats(rows * V);
  double* row_loss = c.arena.doubles(rows);
  softmax_xent(logits, tgt, *dlogits, row_loss, rows, V, scale, *dlogits16, c.s);
  return sum_row_losses(row_loss, rows, c.s);
}

// The forward of layers [first, last): from the embedding (first == 0) or the streams `input` (host, [N, n, d]);
// the head, the cross-entropy and the MTP modules when last == L. The CPU's forward_range (model.cpp).
Losses forward_range(Model::Impl& I, const Batch& bt, bool training, int64_t first, int64_t last, const float* input,
                     bool again = false) {
  const model::ModelConfig& cfg = I.cfg;
  if (bt.B <= 0 || bt.T <= 0 || !bt.tokens) throw Error("cuda model: empty batch");
  const int64_t B = bt.B, T = bt.T, N = B * T, d = cfg.hidden_size, n = cfg.hc_mult, V = cfg.vocab_size;
  const int64_t Lm = cfg.num_hidden_layers;
  if (first != I.stage_first || last != I.stage_end)
    throw Error(fmt::format("cuda model: a forward of layers [{}, {}) on a model that holds layers [{}, {})", first,
                            last, I.stage_first, I.stage_end));
  if (first > 0 && !input) throw Error("cuda model: a stage after the first needs its input streams");
  I.has_forward = false;
  for (int64_t i = 0; i < N; ++i)
    if (bt.tokens[i] < 0 || bt.tokens[i] >= V)
      throw Error("cuda model: token id " + std::to_string(bt.tokens[i]) + " at position " + std::to_string(i) +
                  " outside the vocabulary [0, " + std::to_string(V) + ")");
  if (T > I.rope_len) {  // tables sized to the longest sequence seen (positions restart per document)
    const int64_t len = std::max<int64_t>(T, 64);
    I.rope_a.upload(model::detail::window_rope_table(cfg, len));
    I.rope_b.upload(model::detail::compressed_rope_table(cfg, len));
    I.rope_len = len;
  }
  I.arena->reset();
  Ctx c = I.ctx(training);
  c.indexer_grads = !again;  // a forward recomputed for its backward: the indexer's gradients are in already
  I.saved.assign(I.blocks.size(), BlockSaved{});
  I.mtp.assign(size_t(cfg.num_nextn_predict_layers), MtpSaved{});
  I.mseq_host.resize(size_t(cfg.num_nextn_predict_layers));
  I.mseq.assign(size_t(cfg.num_nextn_predict_layers), DeviceSeq{});
  I.tokens_host.assign(bt.tokens, bt.tokens + N);
  const int32_t* tokens_d = to_device(c, I.tokens_host);
  I.seq_host.build(B, T, bt.doc_ids, I.ratios);
  I.seq = upload_seq(c, I.seq_host, tokens_d);
  Losses L;
  double idx_loss = 0, bal_loss = 0;
  I.fwd_first = first;
  I.fwd_last = last;
  I.X0 = c.arena.floats(N * n * d);
  if (first == 0)
    embedding_forward(c.p(I.embed), tokens_d, N, n, d, I.X0, c.s);
  else
    TREX_CUDA_CHECK(cudaMemcpyAsync(I.X0, input, sizeof(float) * size_t(N * n * d), cudaMemcpyHostToDevice, c.s));
  const float* X = I.X0;
  for (int64_t l = first; l < last; ++l) {
    bal_loss += block_forward(c, I.seq, I.blocks[size_t(l)], I.experts[size_t(l)].data(), X, I.saved[size_t(l)],
                              &idx_loss);
    I.load[size_t(l)] = I.saved[size_t(l)].moe.counts;
    X = I.saved[size_t(l)].Xout;
  }
  I.Xout = X;
  if (last < Lm) {  // an earlier pipeline stage: its blocks' share of the losses, the streams go on
    L.balance = bal_loss;
    L.indexer = idx_loss;
    L.total = L.balance + L.indexer;
    I.has_forward = true;
    return L;
  }
  const float eps = float(cfg.rms_norm_eps);
  I.h = c.arena.floats(N * d);
  hc_head_forward(c, X, N, I.hc_head, I.head_saved, I.h);
  I.hn = c.arena.floats(N * d);
  I.hn_rstd = c.arena.floats(N);
  rmsnorm_forward(I.h, c.p(I.norm), I.hn, I.hn_rstd, N, d, eps, c.s);
  I.logits = c.arena.floats(N * V);
  linear(c, I.hn, nullptr, I.head, I.logits, N, V, d);
  std::vector<int32_t> tgt(static_cast<size_t>(N));
  const int64_t ce_count = model::make_targets(bt, 1, T, tgt.data());
  L.ce_count = ce_count;
  const float ce_scale = !ce_count ? 0.0f
                         : bt.ce_denominator > 0 ? float(1.0 / bt.ce_denominator)
                                                 : 1.0f / float(ce_count);
  L.ce = head_xent(c, I.logits, to_device(c, tgt), N, ce_scale, &I.dlogits, &I.dlogits16);

  // MTP modules (§8, §16.3)
  const int64_t n_mtp = cfg.num_nextn_predict_layers;
  const float* Xprev = X;
  int64_t Tprev = T;
  double mtp_sum = 0;
  for (int64_t i = 0; i < n_mtp; ++i) {
    MtpSaved& ms = I.mtp[size_t(i)];
    const MtpOff& mo = I.mtp_off[size_t(i)];
    const int64_t Tm = Tprev - 1;
    ms.Tm = Tm;
    if (Tm <= 0) break;
    const int64_t Nm = B * Tm;
    ms.Nm = Nm;
    std::vector<int32_t> doc(static_cast<size_t>(Nm));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < Tm; ++t) doc[size_t(b * Tm + t)] = bt.doc_ids ? bt.doc_ids[b * T + t] : 0;
    model::detail::Seq& sqh = I.mseq_host[size_t(i)];
    sqh.build(B, Tm, doc.data(), I.ratios);
    I.mseq[size_t(i)] = upload_seq(c, sqh, nullptr);
    ms.Xin = c.arena.floats(Nm * n * d);
    copy_row_blocks(Xprev, Tprev * n * d, ms.Xin, Tm * n * d, Tm * n * d, B, c.s);
    ms.hn = c.arena.floats(Nm * n * d);
    ms.hn_rstd = c.arena.floats(Nm * n);
    rmsnorm_forward(ms.Xin, c.p(mo.hnorm), ms.hn, ms.hn_rstd, Nm * n, d, eps, c.s);
    ms.etok_host.resize(size_t(Nm));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < Tm; ++t) ms.etok_host[size_t(b * Tm + t)] = bt.tokens[b * T + t + i + 1];
    ms.etok = to_device(c, ms.etok_host);
    ms.e = c.arena.floats(Nm * d);
    embedding_forward(c.p(I.embed), ms.etok, Nm, 1, d, ms.e, c.s);
    ms.en = c.arena.floats(Nm * d);
    ms.en_rstd = c.arena.floats(Nm);
    rmsnorm_forward(ms.e, c.p(mo.enorm), ms.en, ms.en_rstd, Nm, d, eps, c.s);
    float* ep = c.arena.floats(Nm * d);
    linear(c, ms.en, nullptr, mo.e_proj, ep, Nm, d, d);
    ms.Xm = c.arena.floats(Nm * n * d);
    linear(c, ms.hn, nullptr, mo.h_proj, ms.Xm, Nm * n, d, d);
    add_to_streams(ms.Xm, ep, Nm, n, d, c.s);
    const size_t bi = size_t(Lm + i);
    bal_loss += block_forward(c, I.mseq[size_t(i)], I.blocks[bi], I.experts[bi].data(), ms.Xm, I.saved[bi],
                              &idx_loss);
    I.load[bi] = I.saved[bi].moe.counts;
    ms.h = c.arena.floats(Nm * d);
    hc_head_forward(c, I.saved[bi].Xout, Nm, mo.hc_head, ms.head, ms.h);
    ms.fn = c.arena.floats(Nm * d);
    ms.fn_rstd = c.arena.floats(Nm);
    rmsnorm_forward(ms.h, c.p(mo.norm), ms.fn, ms.fn_rstd, Nm, d, eps, c.s);
    ms.logits = c.arena.floats(Nm * V);
    linear(c, ms.fn, nullptr, I.head, ms.logits, Nm, V, d);
    std::vector<int32_t> mt(static_cast<size_t>(Nm));
    ms.count = model::make_targets(bt, i + 2, Tm, mt.data());
    L.mtp_count += ms.count;
    const double mtp_den = bt.mtp_denominator > 0 ? bt.mtp_denominator : double(ms.count);
    const float scale = ms.count ? float(cfg.mtp_loss_weight / double(n_mtp) / mtp_den) : 0.0f;
    const double lsum = head_xent(c, ms.logits, to_device(c, mt), Nm, scale, &ms.dlogits, &ms.dlogits16);
    mtp_sum += ms.count ? lsum / (cfg.mtp_loss_weight / double(n_mtp)) : 0.0;
    Xprev = I.saved[bi].Xout;
    Tprev = Tm;
  }
  L.mtp = n_mtp ? mtp_sum / double(n_mtp) : 0.0;
  L.balance = bal_loss;
  L.indexer = idx_loss;
  L.total = L.ce + cfg.mtp_loss_weight * L.mtp + L.balance + L.indexer;
  I.has_forward = true;
  return L;
}

// gE += the gradient of rows whose tokens are `tokens` (host): the inverse lists built on the host, uploaded, summed
// on the device in the CPU's order (model_glue.hpp).
void embedding_backward_rows(Ctx& c, const std::vector<int32_t>& tokens, const float* dX, int64_t n, int64_t d,
                             float* gE) {
  const EmbeddingLists L = build_embedding_lists(tokens.data(), int64_t(tokens.size()), c.cfg.vocab_size);
  embedding_backward(to_device(c, L.ids), to_device(c, L.offsets), to_device(c, L.positions), L.distinct(), dX, n,
                     d, gE, c.s);
}

// The backward of the last forward's layers, gradients ACCUMULATED. output_grad (host [N, n, d]): the gradient wrt the
// streams leaving the range (an earlier pipeline stage; ignored on the last). input_grad (host, first > 0): the
// gradient wrt the range's input streams. The CPU's backward_range.
void backward_range(Model::Impl& I, const float* output_grad, std::span<float> input_grad) {
  const model::ModelConfig& cfg = I.cfg;
  if (!I.has_forward) throw Error("cuda model: a backward without the forward of its batch");
  I.has_forward = false;  // the backward's scratch overwrites the arena's forward state
  Ctx c = I.ctx(true);
  const int64_t B = I.seq.B, T = I.seq.T, N = B * T, d = cfg.hidden_size, n = cfg.hc_mult, V = cfg.vocab_size;
  const int64_t Lm = cfg.num_hidden_layers, n_mtp = cfg.num_nextn_predict_layers;
  const int64_t first = I.fwd_first, last = I.fwd_last;
  if (last < Lm && !output_grad) throw Error("cuda model: a stage before the last needs its output gradient");
  if (first > 0 && int64_t(input_grad.size()) != N * n * d)
    throw Error(fmt::format("cuda model: the input gradient of a stage holds {} floats, not {}", input_grad.size(),
                            N * n * d));
  float* dXL = c.arena.floats(N * n * d);
  if (last < Lm)
    TREX_CUDA_CHECK(cudaMemcpyAsync(dXL, output_grad, sizeof(float) * size_t(N * n * d), cudaMemcpyHostToDevice, c.s));
  else
    zero_async(dXL, sizeof(float) * size_t(N * n * d), c.s);
  if (last == Lm) {
    // Chained MTP (§8): module i reads the block output of module i-1 (module 0: X); the backward runs from the
    // last module down, each adding its input gradient to the output gradient of the module before it.
    std::vector<float*> dXout(size_t(n_mtp), nullptr);
    for (int64_t i = 0; i < n_mtp; ++i)
      if (I.mtp[size_t(i)].Tm > 0) {
        const int64_t rows = B * I.mtp[size_t(i)].Tm * n * d;
        dXout[size_t(i)] = c.arena.floats(rows);
        zero_async(dXout[size_t(i)], sizeof(float) * size_t(rows), c.s);
      }
    for (int64_t i = n_mtp - 1; i >= 0; --i) {
      MtpSaved& ms = I.mtp[size_t(i)];
      const MtpOff& mo = I.mtp_off[size_t(i)];
      const int64_t Tm = ms.Tm;
      if (Tm <= 0) continue;
      const int64_t Nm = ms.Nm;
      const size_t bi = size_t(Lm + i);
      float* dfn = c.arena.floats(Nm * d);
      linear_backward(c, ms.fn, nullptr, I.head, ms.dlogits, ms.dlogits16, dfn, false, Nm, V, d);
      float* dh = c.arena.floats(Nm * d);
      rmsnorm_backward(ms.h, c.p(mo.norm), ms.fn_rstd, dfn, dh, c.g(mo.norm), Nm, d, false, c.arena, c.s);
      float* dXo = dXout[size_t(i)];
      hc_head_backward(c, Nm, mo.hc_head, ms.head, dh, dXo);
      float* dXm = c.arena.floats(Nm * n * d);
      zero_async(dXm, sizeof(float) * size_t(Nm * n * d), c.s);
      {
        const auto mark = c.arena.mark();  // the block's backward scratch is released right after
        block_backward(c, I.mseq[size_t(i)], I.blocks[bi], I.experts[bi].data(), ms.Xm, I.saved[bi], dXo, dXm);
        c.arena.release(mark);
      }
      float* dhn = c.arena.floats(Nm * n * d);
      linear_backward(c, ms.hn, nullptr, mo.h_proj, dXm, nullptr, dhn, false, Nm * n, d, d);
      float* dXin = c.arena.floats(Nm * n * d);
      rmsnorm_backward(ms.Xin, c.p(mo.hnorm), ms.hn_rstd, dhn, dXin, c.g(mo.hnorm), Nm * n, d, false, c.arena, c.s);
      float* dprev = i == 0 ? dXL : dXout[size_t(i - 1)];  // gradient wrt this module's input rows
      const int64_t Tprev_i = i == 0 ? T : I.mtp[size_t(i - 1)].Tm;
      add_row_blocks(dXin, Tm * n * d, dprev, Tprev_i * n * d, Tm * n * d, B, c.s);
      float* dep = c.arena.floats(Nm * d);
      sum_streams(dXm, Nm, n, d, dep, c.s);
      float* den = c.arena.floats(Nm * d);
      linear_backward(c, ms.en, nullptr, mo.e_proj, dep, nullptr, den, false, Nm, d, d);
      float* de = c.arena.floats(Nm * d);
      rmsnorm_backward(ms.e, c.p(mo.enorm), ms.en_rstd, den, de, c.g(mo.enorm), Nm, d, false, c.arena, c.s);
      embedding_backward_rows(c, ms.etok_host, de, 1, d, c.g(I.embed));
    }
    float* dhn = c.arena.floats(N * d);
    linear_backward(c, I.hn, nullptr, I.head, I.dlogits, I.dlogits16, dhn, false, N, V, d);
    float* dh = c.arena.floats(N * d);
    rmsnorm_backward(I.h, c.p(I.norm), I.hn_rstd, dhn, dh, c.g(I.norm), N, d, false, c.arena, c.s);
    hc_head_backward(c, N, I.hc_head, I.head_saved, dh, dXL);
  }
  float* dX = dXL;
  for (int64_t l = last - 1; l >= first; --l) {
    const float* Xin = l == first ? I.X0 : I.saved[size_t(l - 1)].Xout;
    float* dXin = c.arena.floats(N * n * d);
    zero_async(dXin, sizeof(float) * size_t(N * n * d), c.s);
    const auto mark = c.arena.mark();
    block_backward(c, I.seq, I.blocks[size_t(l)], I.experts[size_t(l)].data(), Xin, I.saved[size_t(l)], dX, dXin);
    c.arena.release(mark);
    dX = dXin;
  }
  if (first > 0) {
    TREX_CUDA_CHECK(
        cudaMemcpyAsync(input_grad.data(), dX, sizeof(float) * size_t(N * n * d), cudaMemcpyDeviceToHost, c.s));
    return;
  }
  embedding_backward_rows(c, I.tokens_host, dX, n, d, c.g(I.embed));
}

}  // namespace

// ============================================================ construction and buffers
namespace {
// The device is checked before any member touches the CUDA runtime (the stream, cuBLASLt): a clear message.
const model::ModelConfig& on_a_device(const model::ModelConfig& cfg) {
  std::string why;
  if (!available(&why)) throw Error("cuda model: no usable CUDA device: " + why);
  return cfg;
}
}  // namespace

Model::Model(const model::ModelConfig& cfg, const ModelOptions& opt)
    : impl_(std::make_unique<Impl>(on_a_device(cfg), opt)) {
  auto& I = *impl_;
  I.cfg.validate();
  auto& st = I.host;
  if (opt.expert_group && opt.expert_group->size() > 1) {
    if (I.cfg.n_routed_experts % opt.expert_group->size() != 0)
      throw Error(fmt::format("cuda model: {} routed experts do not split evenly over {} expert-parallel ranks",
                              I.cfg.n_routed_experts, opt.expert_group->size()));
    I.ep_group = opt.expert_group;
  }
  // A pipeline stage holds its layers [first_layer, end_layer); the first stage the embedding, the last the head,
  // final norm, head collapse, MTP modules and (with MTP) the embedding; under expert parallelism every rank of a
  // stage holds those but other ranks' routed experts. Anything else left out is an error.
  const int64_t Lm = I.cfg.num_hidden_layers;
  I.stage_first = opt.first_layer;
  I.stage_end = opt.end_layer < 0 ? Lm : opt.end_layer;
  if (I.stage_first < 0 || I.stage_first >= I.stage_end || I.stage_end > Lm)
    throw Error(fmt::format("cuda model: layers [{}, {}) are not a stage of a model of {} layers", I.stage_first,
                            I.stage_end, Lm));
  const bool first_stage = I.stage_first == 0, last_stage = I.stage_end == Lm;
  auto needed = [&](const std::string& name) {
    if (name.rfind("layers.", 0) == 0) {
      const int64_t l = std::stoll(name.substr(7, name.find('.', 7) - 7));
      return l >= I.stage_first && l < I.stage_end;
    }
    if (name == "embed.weight") return first_stage || (last_stage && I.cfg.num_nextn_predict_layers > 0);
    return last_stage;  // mtp.*, head, norm, hc_head_*
  };
  auto left_out = [&](const std::string& name) {
    return Error(fmt::format("cuda model: the placement leaves out {}, which the stage of layers [{}, {}) runs",
                             name, I.stage_first, I.stage_end));
  };
  for (const model::ParamInfo& t : st.canonical_table())
    if (needed(t.name) && st.held_offset(t.name) < 0 && t.name.find(".ffn.experts.") == std::string::npos)
      throw left_out(t.name);
  for (const model::ParamInfo& t : st.canonical_int_table())  // the hash layers' tables
    if (needed(t.name) && !st.int_param(t.name)) throw left_out(t.name);
  for (int64_t l = 0; l < I.cfg.num_hidden_layers; ++l)
    I.blocks.emplace_back(I.cfg, st, "layers." + std::to_string(l) + ".", l);
  for (int64_t i = 0; i < I.cfg.num_nextn_predict_layers; ++i) {
    const std::string p = "mtp." + std::to_string(i) + ".";
    I.blocks.emplace_back(I.cfg, st, p, I.cfg.num_hidden_layers + i);
    auto off = [&](const std::string& nm) { return st.held_offset(p + nm); };
    I.mtp_off.push_back(MtpOff{off("e_proj.weight"), off("h_proj.weight"), off("enorm.weight"), off("hnorm.weight"),
                               off("norm.weight"), HcOff{off("hc_head_fn"), off("hc_head_base"), off("hc_head_scale")}});
  }
  for (auto r : I.cfg.compress_ratios)
    if (r != 0 && std::find(I.ratios.begin(), I.ratios.end(), r) == I.ratios.end()) I.ratios.push_back(r);
  I.embed = st.held_offset("embed.weight");
  I.head = st.held_offset("head.weight");
  I.norm = st.held_offset("norm.weight");
  I.hc_head = {st.held_offset("hc_head_fn"), st.held_offset("hc_head_base"), st.held_offset("hc_head_scale")};
  I.numel = int64_t(st.params().size());
  const size_t nbytes = sizeof(float) * size_t(std::max<int64_t>(1, I.numel));
  I.P = DeviceBuffer(nbytes);
  if (opt.gradients) I.G = DeviceBuffer(nbytes);
  if (opt.matmul == GemmType::bf16) I.P16 = DeviceBuffer(sizeof(uint16_t) * size_t(std::max<int64_t>(1, I.numel)));
  I.Pint = DeviceBuffer(sizeof(int64_t) * std::max<size_t>(1, st.int_params().size()));
  float* P = I.P.as<float>();
  float* G = opt.gradients ? I.G.as<float>() : nullptr;
  const uint16_t* P16 = opt.matmul == GemmType::bf16 ? I.P16.as<uint16_t>() : nullptr;
  // this rank's experts: [e0, e0 + El) of every block (the whole range in one process)
  const int64_t E = I.cfg.n_routed_experts;
  const int ep_ranks = I.ep_group ? I.ep_group->size() : 1, ep_rank = I.ep_group ? I.ep_group->rank() : 0;
  const int64_t El = E / ep_ranks, e0 = int64_t(ep_rank) * El;
  for (size_t bi = 0; bi < I.blocks.size(); ++bi) {
    const auto& b = I.blocks[bi];
    std::vector<DeviceExpertWeights> ew(static_cast<size_t>(El));
    if (!I.runs_block(bi)) {  // another pipeline stage's block: none of its tensors are here
      I.experts.push_back(std::move(ew));
      continue;
    }
    for (int64_t e = 0; e < E; ++e) {
      const bool mine = e >= e0 && e < e0 + El, held = b.w1[size_t(e)] >= 0;
      if (mine != held)
        throw Error(fmt::format("cuda model: {}ffn.experts.{} is {}held, but rank {} of {} expert-parallel ranks owns "
                                "experts [{}, {}) (placement and expert group disagree)", b.prefix, e,
                                held ? "" : "not ", ep_rank, ep_ranks, e0, e0 + El));
      if (!mine) continue;
      const size_t x = size_t(e);
      ew[size_t(e - e0)] = {P + b.w1[x], P + b.w3[x], P + b.w2[x],
                            P16 ? P16 + b.w1[x] : nullptr, P16 ? P16 + b.w3[x] : nullptr, P16 ? P16 + b.w2[x] : nullptr,
                            G ? G + b.w1[x] : nullptr, G ? G + b.w3[x] : nullptr, G ? G + b.w2[x] : nullptr};
    }
    I.experts.push_back(std::move(ew));
  }
  I.load.assign(I.blocks.size(), std::vector<int64_t>(size_t(I.cfg.n_routed_experts), 0));
  // Room for what is allocated after this model: its caller's per-parameter state, and where other processes share
  // the device, their buffers as large as ours (they may not have allocated yet).
  const size_t own = I.P.bytes() + I.G.bytes() + I.P16.bytes() + I.Pint.bytes();
  const size_t later = size_t(opt.later_bytes_per_param * double(I.numel));
  const size_t reserve = later + size_t(std::max(0, opt.device_sharers - 1)) * (own + later);
  I.arena = std::make_unique<DeviceArena>(
      arena_bytes_or_free(opt.activation_bytes, reserve, opt.device_sharers, "cuda model activation arena"),
      "cuda model activation arena");
  zero_grad();
}

// A step cut short by an exception may leave copies queued that read the exchange's pinned host buffers (gpu_moe.cpp):
// they finish before the buffers are freed.
Model::~Model() {
  if (impl_) cudaStreamSynchronize(impl_->stream.get());  // no throw from a destructor
}

void gm::DeviceRopeTable::upload(const nn::RopeTable& t) {
  const size_t bytes = sizeof(float) * std::max<size_t>(1, t.cos.size());
  cos = DeviceBuffer(bytes);
  sin = DeviceBuffer(bytes);
  if (!t.cos.empty()) {
    cos.upload(t.cos.data(), sizeof(float) * t.cos.size());
    sin.upload(t.sin.data(), sizeof(float) * t.sin.size());
  }
  r = t.r;
}

void gm::rope(float* x, int64_t n, int64_t heads, int64_t hd, const int32_t* pos, const DeviceRope& r, bool inverse,
              cudaStream_t s) {
  rope_apply(x, n, heads, hd, pos, r.cos, r.sin, r.r, inverse, s);
}

size_t gm::arena_bytes_or_free(size_t requested, size_t reserve, int sharers, const char* what) {
  if (requested != 0) return requested;
  size_t free_b = 0, total_b = 0;
  TREX_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const double gib = double(1ull << 30);
  if (free_b <= reserve + (size_t(256) << 20))
    throw Error(fmt::format("{}: {:.2f} GiB of device memory free, {:.2f} GiB of it needed after the arena "
                            "(optimizer state, other processes on the device): no room for activations",
                            what, double(free_b) / gib, double(reserve) / gib));
  return size_t(double(free_b - reserve) * 0.85 / std::max(1, sharers));
}

gm::ModelInternals gm::internals(Model& m) {
  Model::Impl& I = *m.impl_;
  return ModelInternals{I.cfg,
                        I.blocks,
                        I.experts,
                        I.embed,
                        I.head,
                        I.norm,
                        I.hc_head,
                        I.P.as<float>(),
                        I.opt.matmul == GemmType::bf16 ? I.P16.as<uint16_t>() : nullptr,
                        I.Pint.as<int64_t>(),
                        I.host.int_params().data(),
                        I.blas,
                        I.stream.get(),
                        I.opt.matmul};
}

const model::ModelConfig& Model::config() const { return impl_->cfg; }
const ModelOptions& Model::options() const { return impl_->opt; }
model::ParamStore& Model::host() { return impl_->host; }
float* Model::device_params() { return impl_->P.as<float>(); }
float* Model::device_grads() { return impl_->G.as<float>(); }
uint16_t* Model::device_params_bf16() {
  return impl_->opt.matmul == GemmType::bf16 ? impl_->P16.as<uint16_t>() : nullptr;
}
int64_t Model::numel() const { return impl_->numel; }
size_t Model::activation_capacity() const { return impl_->arena->capacity(); }
size_t Model::activation_high_water() const { return impl_->arena->high_water_bytes(); }
int64_t Model::n_moe_blocks() const { return int64_t(impl_->blocks.size()); }
std::span<const int64_t> Model::expert_load(int64_t block) const { return impl_->load.at(size_t(block)); }

void Model::refresh_bf16() {
  auto& I = *impl_;
  if (I.opt.matmul != GemmType::bf16) return;
  round_to_bf16(I.P.as<float>(), I.P16.as<uint16_t>(), I.numel, I.stream.get());
  I.stream.synchronize();
}

void Model::upload() {
  auto& I = *impl_;
  I.stream.synchronize();
  I.P.upload(I.host.params().data(), sizeof(float) * size_t(I.numel));
  if (!I.host.int_params().empty())
    I.Pint.upload(I.host.int_params().data(), sizeof(int64_t) * I.host.int_params().size());
  refresh_bf16();
  zero_grad();
}

void Model::download() {
  auto& I = *impl_;
  I.stream.synchronize();
  I.P.download(I.host.params().data(), sizeof(float) * size_t(I.numel));
}

namespace {
void require_gradients(const Model::Impl& I, const char* what) {
  if (!I.opt.gradients)
    throw Error(std::string("cuda model: ") + what + " needs gradients, and this model was built without them "
                "(ModelOptions::gradients = false: forward only)");
}
}  // namespace

void Model::download_grads(std::span<float> grads) const {
  auto& I = *impl_;
  require_gradients(I, "download_grads");
  if (int64_t(grads.size()) != I.numel)
    throw Error("cuda model: download_grads into " + std::to_string(grads.size()) + " floats, the model has " +
                std::to_string(I.numel));
  I.stream.synchronize();
  I.G.download(grads.data(), sizeof(float) * size_t(I.numel));
}

void Model::zero_grad() {
  auto& I = *impl_;
  if (!I.opt.gradients) return;  // nothing to zero
  zero_async(I.G.as<float>(), sizeof(float) * size_t(std::max<int64_t>(1, I.numel)), I.stream.get());
  I.stream.synchronize();
}

Losses Model::forward_backward(const Batch& batch) {
  require_gradients(*impl_, "forward_backward");
  const Losses L = forward_range(*impl_, batch, true, 0, impl_->cfg.num_hidden_layers, nullptr);
  backward_range(*impl_, nullptr, {});
  impl_->stream.synchronize();
  return L;
}

Losses Model::forward(const Batch& batch) {
  const Losses L = forward_range(*impl_, batch, false, 0, impl_->cfg.num_hidden_layers, nullptr);
  impl_->has_forward = false;  // no gradient state was kept (training off)
  impl_->stream.synchronize();
  return L;
}

Losses Model::stage_forward(const Batch& batch, const float* input, bool again) {
  require_gradients(*impl_, "stage_forward");
  const Losses L = forward_range(*impl_, batch, true, impl_->stage_first, impl_->stage_end, input, again);
  impl_->stream.synchronize();
  return L;
}

void Model::stage_output(std::span<float> out) {
  auto& I = *impl_;
  const int64_t n = I.seq.B * I.seq.T * I.cfg.hc_mult * I.cfg.hidden_size;
  if (!I.has_forward || !I.Xout) throw Error("cuda model: stage_output before a stage_forward");
  if (int64_t(out.size()) != n)
    throw Error(fmt::format("cuda model: a stage's output holds {} floats, not {}", n, out.size()));
  TREX_CUDA_CHECK(
      cudaMemcpyAsync(out.data(), I.Xout, sizeof(float) * size_t(n), cudaMemcpyDeviceToHost, I.stream.get()));
  I.stream.synchronize();
}

void Model::stage_backward(const float* output_grad, std::span<float> input_grad) {
  require_gradients(*impl_, "stage_backward");
  backward_range(*impl_, output_grad, input_grad);
  impl_->stream.synchronize();
}

int64_t Model::first_layer() const { return impl_->stage_first; }
int64_t Model::end_layer() const { return impl_->stage_end; }

void Model::update_gate_bias(double rate, model::ProcessGroup* data_group) {
  auto& I = *impl_;
  if (rate <= 0) rate = I.cfg.bias_update_rate;
  I.stream.synchronize();
  if (data_group && data_group->size() > 1) {  // model::Model::update_gate_bias's exchange
    std::vector<float> buf;
    // this rank's own loads: zeros for the blocks of other pipeline stages (I.load keeps the sums of the last
    // update there, which must not be added again)
    for (size_t bi = 0; bi < I.load.size(); ++bi)
      for (auto v : I.load[bi]) buf.push_back(I.runs_block(bi) ? float(v) : 0.0f);  // counts < 2^24: exact in fp32
    data_group->all_reduce_sum(buf);
    size_t k = 0;
    for (auto& ld : I.load)
      for (auto& v : ld) v = int64_t(buf[k++]);
  }
  float* params = I.host.params().data();
  for (size_t bi = 0; bi < I.blocks.size(); ++bi) {
    const auto& b = I.blocks[bi];
    if (b.hash || b.gate_bias < 0) continue;
    const auto& load = I.load[bi];
    // the host copy is current: biases are not trainable (the optimizer never moves them), and every other write
    // (upload, this function) goes through the host
    float* bias = params + b.gate_bias;
    model::apply_gate_bias_update(bias, load, rate);
    I.P.upload(bias, sizeof(float) * load.size(), sizeof(float) * size_t(b.gate_bias));
  }
}

}  // namespace trex::cuda
