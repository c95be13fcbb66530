// cuda::Decoder (gpu_decode.hpp): the caches as device row pools, a step as model/decode.cpp's step over all rows at
// once — embedding, per block mHC / RMSNorm / attention over the caches / mHC / RMSNorm / MoE / mHC, then the
// collapse head, final norm and LM head on the rows whose logits are wanted. Attention follows decode.cpp's
// attention_step with the lists of model::plan_decode_step in place of its per-token loops.
#include "cuda/gpu_decode.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "cuda/check.hpp"
#include "cuda/compressor.hpp"
#include "cuda/decode_rows.hpp"
#include "cuda/gpu_model_impl.hpp"
#include "cuda/indexer.hpp"
#include "cuda/model_glue.hpp"
#include "cuda/ops.hpp"
#include "cuda/sparse_attention.hpp"
#include "util/error.hpp"

namespace trex::cuda {

using namespace gm;
using model::AttnKind;
using model::DecodeCompressorPlan;
using model::DecodePlan;

namespace {

// One main layer's caches (decode_plan.hpp's pools).
struct LayerPools {
  int64_t m = 0;
  bool csa = false;
  float* keys = nullptr;            // [key_rows(m), head_dim]
  float *C = nullptr, *Z = nullptr;  // [compressor_rows(m), W] (compressed layers)
  float *Ci = nullptr, *Zi = nullptr, *index = nullptr;  // the indexer's compressor and entries (CSA)
};

// A compressor plan's lists on the device.
struct CompressorLists {
  const DecodeCompressorPlan* host = nullptr;
  int32_t *gather, *start, *idx, *epos, *key_dst, *index_dst, *ring_src, *ring_dst, *nvis, *key_base, *index_base;
  int32_t *comp, *ncomp;
};

struct StepLists {
  const DecodePlan* host = nullptr;
  int32_t *pos, *ws, *nold, *comp, *ncomp, *ring_src, *ring_dst, *last_row;
  std::vector<CompressorLists> cmp;
  const CompressorLists& compressor(int64_t m, bool overlap) const {
    for (const auto& c : cmp)
      if (c.host->m == m && c.host->overlap == overlap) return c;
    throw Error("cuda decoder: no compressor lists for ratio " + std::to_string(m));
  }
};

}  // namespace

struct Decoder::Impl {
  Model& model;
  ModelInternals M;
  model::DecodeLayout layout;
  std::unique_ptr<DeviceArena> caches, arena;
  size_t cache_bytes = 0;
  std::vector<LayerPools> pools;
  DeviceRopeTable rope_a, rope_b;
  std::vector<int64_t> length;  // per slot; -1: closed
  std::vector<float> logits;

  Impl(Model& m, const DecoderOptions& o)
      : model(m),
        M(internals(m)),
        layout(model::DecodeCapacity{o.sequences, o.tokens, o.rows > 0 ? o.rows : o.tokens},
               m.config().sliding_window) {}

  Ctx ctx() {
    return Ctx{M.cfg, M.P, nullptr, M.P16, M.Pint, M.host_ints, M.blas, *arena, M.stream, M.type, false,
               rope_a.view(), rope_b.view(), /*balance_loss=*/false};
  }
};

Decoder::Decoder(Model& model, const DecoderOptions& opt) : impl_(std::make_unique<Impl>(model, opt)) {
  Impl& I = *impl_;
  const model::ModelConfig& cfg = model.config();
  if (cfg.indexer_dense_warmup)
    throw Error("cuda decoder: the config has indexer_dense_warmup set (a training stage); decoding needs top-k CSA");
  if (model.host().sharded())  // the decoder routes every token to any of the E experts on this device
    throw Error("cuda decoder: the model must hold every expert (built without expert parallelism)");
  const model::DecodeLayout& L = I.layout;
  const int64_t hd = cfg.head_dim, cI = cfg.index_head_dim;
  // the pools' sizes, then one allocation for all of them
  auto pool_floats = [&](int64_t l) {
    const int64_t m = cfg.ratio(l);
    const bool csa = cfg.kind(l) == AttnKind::CSA;
    std::vector<int64_t> n = {L.key_rows(m) * hd};
    if (m != 0) n.insert(n.end(), 2, L.compressor_rows(m) * (csa ? 2 : 1) * hd);
    if (csa) {
      n.insert(n.end(), 2, L.compressor_rows(m) * 2 * cI);
      n.push_back(L.index_rows(m) * cI);
    }
    return n;
  };
  size_t bytes = 0;
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l)
    for (int64_t n : pool_floats(l))  // each allocation rounded up to the arena's alignment
      bytes += (size_t(n) * sizeof(float) + DeviceArena::kAlign - 1) / DeviceArena::kAlign * DeviceArena::kAlign;
  I.cache_bytes = bytes;
  I.caches = std::make_unique<DeviceArena>(std::max<size_t>(bytes, 1), "cuda decoder caches");
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    LayerPools p;
    p.m = cfg.ratio(l);
    p.csa = cfg.kind(l) == AttnKind::CSA;
    const auto n = pool_floats(l);
    p.keys = I.caches->floats(n[0]);
    if (p.m != 0) {
      p.C = I.caches->floats(n[1]);
      p.Z = I.caches->floats(n[2]);
    }
    if (p.csa) {
      p.Ci = I.caches->floats(n[3]);
      p.Zi = I.caches->floats(n[4]);
      p.index = I.caches->floats(n[5]);
    }
    I.pools.push_back(p);
  }
  I.arena = std::make_unique<DeviceArena>(arena_bytes_or_free(opt.activation_bytes), "cuda decoder step arena");
  const int64_t len = std::max<int64_t>(L.cap.tokens, 64);
  I.rope_a.upload(model::detail::window_rope_table(cfg, len));
  I.rope_b.upload(model::detail::compressed_rope_table(cfg, len));
  I.length.assign(size_t(L.cap.sequences), -1);
}

Decoder::~Decoder() = default;

const model::DecodeCapacity& Decoder::capacity() const { return impl_->layout.cap; }
size_t Decoder::cache_bytes() const { return impl_->cache_bytes; }

int64_t Decoder::open() {
  for (size_t s = 0; s < impl_->length.size(); ++s)
    if (impl_->length[s] < 0) {
      impl_->length[s] = 0;  // no clearing needed: a step reads only the rows of positions it has written
      return int64_t(s);
    }
  return -1;
}

void Decoder::close(int64_t slot) {
  if (slot < 0 || slot >= int64_t(impl_->length.size()) || impl_->length[size_t(slot)] < 0)
    throw Error("cuda decoder: close of slot " + std::to_string(slot) + ", which is not open");
  impl_->length[size_t(slot)] = -1;
}

int64_t Decoder::length(int64_t slot) const {
  if (slot < 0 || slot >= int64_t(impl_->length.size()) || impl_->length[size_t(slot)] < 0)
    throw Error("cuda decoder: slot " + std::to_string(slot) + " is not open");
  return impl_->length[size_t(slot)];
}

namespace {

StepLists upload_lists(Ctx& c, const DecodePlan& P) {
  StepLists d;
  d.host = &P;
  d.pos = to_device(c, P.pos);
  d.ws = to_device(c, P.ws);
  d.nold = to_device(c, P.nold);
  d.comp = to_device(c, P.comp);
  d.ncomp = to_device(c, P.ncomp);
  d.ring_src = to_device(c, P.ring_src);
  d.ring_dst = to_device(c, P.ring_dst);
  d.last_row = to_device(c, P.last_row);
  for (const auto& h : P.compressors) {
    CompressorLists l;
    l.host = &h;
    l.gather = to_device(c, h.gather);
    l.start = to_device(c, h.start);
    l.idx = to_device(c, h.idx);
    l.epos = to_device(c, h.epos);
    l.key_dst = to_device(c, h.key_dst);
    l.index_dst = to_device(c, h.index_dst);
    l.ring_src = to_device(c, h.ring_src);
    l.ring_dst = to_device(c, h.ring_dst);
    l.nvis = to_device(c, h.nvis);
    l.key_base = to_device(c, h.key_base);
    l.index_base = to_device(c, h.index_base);
    l.comp = to_device(c, h.comp);
    l.ncomp = to_device(c, h.ncomp);
    d.cmp.push_back(l);
  }
  return d;
}

// The step's rows projected by one compressor into the staging rows of its pools (C, Z of width W, the ape
// added), the entries the step completes pooled into `entries` (rows dst), then the rings updated.
void compressor_step(Ctx& c, const StepLists& d, const CompressorLists& cl, const float* xa, const uint16_t* xa16,
                     const CmpOff& off, int64_t cdim, const DeviceRope& rp, float* C, float* Z,
                     const int32_t* dst, float* entries) {
  const DecodeCompressorPlan& h = *cl.host;
  const int64_t R = d.host->R, d_model = c.cfg.hidden_size, m = h.m, W = (h.overlap ? 2 : 1) * cdim;
  linear(c, xa, xa16, off.wkv, C, R, W, d_model);
  linear(c, xa, xa16, off.wgate, Z, R, W, d_model);
  DeviceCompressorPool ape;
  ape.N = R;
  ape.m = m;
  ape.cdim = cdim;
  ape.overlap = h.overlap;
  ape.pos = d.pos;
  compressor_ape_add(ape, c.p(off.ape), Z, c.s);
  if (h.NE > 0) {
    const int64_t n = h.NE * h.slots();
    float* Cg = c.arena.floats(n * W);
    float* Zg = c.arena.floats(n * W);
    copy_rows(C, cl.gather, Cg, nullptr, n, W, c.s);
    copy_rows(Z, cl.gather, Zg, nullptr, n, W, c.s);
    DeviceCompressorPool pp;
    pp.N = n;
    pp.NE = h.NE;
    pp.m = m;
    pp.cdim = cdim;
    pp.overlap = h.overlap;
    pp.start = cl.start;
    pp.idx = cl.idx;
    float* S = c.arena.floats(n * cdim);
    float* pooled = c.arena.floats(h.NE * cdim);
    compressor_pool_forward(pp, Cg, Zg, S, pooled, c.s);
    float* out = c.arena.floats(h.NE * cdim);
    float* rstd = c.arena.floats(h.NE);
    rmsnorm_forward(pooled, c.p(off.norm), out, rstd, h.NE, cdim, float(c.cfg.rms_norm_eps), c.s);
    rope(out, h.NE, 1, cdim, cl.epos, rp, false, c.s);
    copy_rows(out, nullptr, entries, dst, h.NE, cdim, c.s);
  }
  const int64_t nr = int64_t(h.ring_src.size());  // after the gather read the old ring rows
  copy_rows(C, cl.ring_src, C, cl.ring_dst, nr, W, c.s);
  copy_rows(Z, cl.ring_src, Z, cl.ring_dst, nr, W, c.s);
}

// decode.cpp's attention_step over the pools: out [R, d].
void attention_step(Ctx& c, const model::DecodeLayout& L, const StepLists& d, const BlockOff& b, LayerPools& pl,
                    const float* xa, float* out) {
  const ModelConfig& cfg = c.cfg;
  const DecodePlan& P = *d.host;
  const int64_t R = P.R, dm = cfg.hidden_size, H = cfg.num_attention_heads, hd = cfg.head_dim;
  const int64_t qr = cfg.q_lora_rank, G = cfg.o_groups, ro = cfg.o_lora_rank, w = cfg.sliding_window;
  const float eps = float(cfg.rms_norm_eps);
  const DeviceRope& rp = b.ratio == 0 ? c.rope_a : c.rope_b;
  const uint16_t* xa16 = bf16_copy(c, xa, R * dm);
  // query, and K == V into the key pool's staging rows
  float* cq_raw = c.arena.floats(R * qr);
  float* rstd = c.arena.floats(R * std::max<int64_t>(H, 1));
  float* cq = c.arena.floats(R * qr);
  linear(c, xa, xa16, b.wq_a, cq_raw, R, qr, dm);
  rmsnorm_forward(cq_raw, c.p(b.q_norm), cq, rstd, R, qr, eps, c.s);
  float* q_raw = c.arena.floats(R * H * hd);
  float* q = c.arena.floats(R * H * hd);
  linear(c, cq, nullptr, b.wq_b, q_raw, R, H * hd, qr);
  rmsnorm_forward(q_raw, nullptr, q, rstd, R * H, hd, eps, c.s);
  rope(q, R, H, hd, d.pos, rp, false, c.s);
  float* kv_raw = c.arena.floats(R * hd);
  linear(c, xa, xa16, b.wkv, kv_raw, R, hd, dm);
  rmsnorm_forward(kv_raw, c.p(b.kv_norm), pl.keys, rstd, R, hd, eps, c.s);
  rope(pl.keys, R, 1, hd, d.pos, rp, false, c.s);
  // the compressed entries this step completes, and each row's key list
  int32_t* comp = d.comp;
  const int32_t* ncomp = d.ncomp;
  int64_t cmax = P.cmax;
  if (b.ratio != 0) {
    const bool csa = b.kind == AttnKind::CSA;
    const CompressorLists& cl = d.compressor(b.ratio, csa);
    compressor_step(c, d, cl, xa, xa16, b.cmp, hd, rp, pl.C, pl.Z, cl.key_dst, pl.keys);
    comp = cl.comp;
    ncomp = cl.ncomp;
    cmax = cl.host->cmax;
    if (csa) {  // the lightning indexer's top-k over the entries each row sees, after its older window keys
      const int64_t HI = cfg.index_n_heads, cI = cfg.index_head_dim, topk = cfg.index_topk;
      float* qI = c.arena.floats(R * HI * cI);
      linear(c, cq, nullptr, b.iwq_b, qI, R, HI * cI, qr);
      rope(qI, R, HI, cI, d.pos, c.rope_b, false, c.s);
      compressor_step(c, d, cl, xa, xa16, b.icmp, cI, c.rope_b, pl.Ci, pl.Zi, cl.index_dst, pl.index);
      float* lam = c.arena.floats(R * HI);
      linear(c, xa, xa16, b.iwp, lam, R, HI, dm);
      scale_in_place(lam, R * HI, float(1.0 / std::sqrt(double(cI) * double(HI))), c.s);
      DeviceIndexer ix;
      ix.N = R;
      ix.HI = HI;
      ix.cI = cI;
      ix.NE = L.index_rows(b.ratio);
      ix.smax = std::max<int64_t>(1, cl.host->max_nvis);
      ix.nvis = cl.nvis;
      ix.base = cl.index_base;
      ix.qI = qI;
      ix.lam = lam;
      ix.K = pl.index;
      float* scores = c.arena.floats(R * ix.smax);
      indexer_scores(ix, scores, c.s);
      int32_t* sel = c.arena.ints(R * topk);
      topk_rows(scores, R, ix.smax, ix.smax, cl.nvis, cl.key_base, topk, sel, c.s);
      append_selection(comp, cmax, d.nold, sel, topk, cl.nvis, R, c.s);
    }
  }
  // the joint softmax over the window (this step's rows ws .. r, then the ring's in the list) + entries + sink
  DeviceSparseAttention a;
  a.N = R;
  a.H = H;
  a.hd = hd;
  a.window = w;
  a.NE = L.key_rows(b.ratio);
  a.cmax = cmax;
  a.q = q;
  a.kv = pl.keys;
  a.C = pl.keys;
  a.ws = d.ws;
  a.comp = comp;
  a.ncomp = ncomp;
  a.sink = c.p(b.sink);
  a.scale = float(1.0 / std::sqrt(double(hd)));
  float* Pr = c.arena.floats(R * H * a.kmax());
  float* o = c.arena.floats(R * H * hd);
  sparse_attention_forward(a, Pr, o, c.s);
  copy_rows(pl.keys, d.ring_src, pl.keys, d.ring_dst, int64_t(P.ring_src.size()), hd, c.s);  // after the reads
  // output de-rotation, then the grouped low-rank projection
  rope(o, R, H, hd, d.pos, rp, true, c.s);
  const uint16_t* o16 = bf16_copy(c, o, R * H * hd);
  const int64_t gw = H * hd / G;
  float* u = c.arena.floats(R * G * ro);
  for (int64_t g = 0; g < G; ++g)
    gemm(c, false, true, R, ro, gw, o + g * gw, o16 ? o16 + g * gw : nullptr, H * hd, c.p(b.wo_a) + g * ro * gw,
         c.p16(b.wo_a) ? c.p16(b.wo_a) + g * ro * gw : nullptr, gw, 0.0f, u + g * ro, G * ro);
  linear(c, u, nullptr, b.wo_b, out, R, dm, G * ro);
}

}  // namespace

std::span<const float> Decoder::step(std::span<const int64_t> slots, std::span<const std::span<const int32_t>> tokens,
                                     bool all_positions) {
  Impl& I = *impl_;
  const model::ModelConfig& cfg = I.M.cfg;
  const int64_t V = cfg.vocab_size, dm = cfg.hidden_size, n = cfg.hc_mult;
  if (slots.size() != tokens.size())
    throw Error("cuda decoder: " + std::to_string(slots.size()) + " sequences but " + std::to_string(tokens.size()) +
                " token lists");
  std::vector<model::DecodeSequenceStep> seqs;
  std::vector<int32_t> row_tokens;
  for (size_t i = 0; i < slots.size(); ++i) {
    const int64_t s = slots[i];
    if (s < 0 || s >= int64_t(I.length.size()) || I.length[size_t(s)] < 0)
      throw Error("cuda decoder: slot " + std::to_string(s) + " is not open");
    for (int32_t id : tokens[i]) {
      if (id < 0 || id >= V)
        throw Error("cuda decoder: token id " + std::to_string(id) + " outside the vocabulary [0, " +
                    std::to_string(V) + ")");
      row_tokens.push_back(id);
    }
    seqs.push_back({s, I.length[size_t(s)], int64_t(tokens[i].size())});
  }
  // A prompt longer than a step's rows runs as consecutive steps (one sequence only: several would reorder rows).
  if (int64_t(row_tokens.size()) > I.layout.cap.rows && seqs.size() == 1) {
    const int64_t Rc = I.layout.cap.rows, total = seqs[0].count;
    std::vector<float> all;
    for (int64_t at = 0; at < total; at += Rc) {
      const int64_t k = std::min(Rc, total - at);
      std::span<const int32_t> part[1] = {tokens[0].subspan(size_t(at), size_t(k))};
      auto lg = step(slots, part, all_positions);
      if (all_positions) all.insert(all.end(), lg.begin(), lg.end());
    }
    if (all_positions) I.logits = std::move(all);
    return I.logits;
  }
  const DecodePlan P = model::plan_decode_step(cfg, I.layout, seqs);  // checks the capacity before any change
  const int64_t R = P.R;
  I.arena->reset();
  Ctx c = I.ctx();
  const StepLists d = upload_lists(c, P);
  const int32_t* tok = to_device(c, row_tokens);
  float* X = c.arena.floats(R * n * dm);
  embedding_forward(c.p(I.M.embed), tok, R, n, dm, X, c.s);
  DeviceSeq rows;  // what the MoE reads: R sequences of one token
  rows.B = R;
  rows.T = 1;
  rows.N = R;
  rows.pos = d.pos;
  rows.ws = d.ws;
  rows.tokens = tok;
  const float eps = float(cfg.rms_norm_eps);
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    const BlockOff& b = I.M.blocks[size_t(l)];
    HcSaved hca, hcf;
    MoeSaved moe;
    float* ya = c.arena.floats(R * dm);
    float* rstd = c.arena.floats(R);
    float* xa = c.arena.floats(R * dm);
    hc_pre_forward(c, X, R, b.hc_attn, hca, ya);
    rmsnorm_forward(ya, c.p(b.attn_norm), xa, rstd, R, dm, eps, c.s);
    float* attn_out = c.arena.floats(R * dm);
    attention_step(c, I.layout, d, b, I.pools[size_t(l)], xa, attn_out);
    float* Xmid = c.arena.floats(R * n * dm);
    hc_post_forward(c, attn_out, X, hca, R, Xmid);
    float* yf = c.arena.floats(R * dm);
    float* xf = c.arena.floats(R * dm);
    hc_pre_forward(c, Xmid, R, b.hc_ffn, hcf, yf);
    rmsnorm_forward(yf, c.p(b.ffn_norm), xf, rstd, R, dm, eps, c.s);
    float* ffn_out = c.arena.floats(R * dm);
    moe_forward(c, rows, b, I.M.experts[size_t(l)].data(), xf, moe, ffn_out);
    float* Xout = c.arena.floats(R * n * dm);
    hc_post_forward(c, ffn_out, Xmid, hcf, R, Xout);
    X = Xout;
  }
  // collapse head, final norm, LM head on the rows whose logits are wanted
  int64_t Ro = R;
  const float* Xo = X;
  if (!all_positions) {
    Ro = int64_t(seqs.size());
    float* Xl = c.arena.floats(Ro * n * dm);
    copy_rows(X, d.last_row, Xl, nullptr, Ro, n * dm, c.s);
    Xo = Xl;
  }
  HcSaved hs;
  float* h = c.arena.floats(Ro * dm);
  hc_head_forward(c, Xo, Ro, I.M.hc_head, hs, h);
  float* hn = c.arena.floats(Ro * dm);
  float* hr = c.arena.floats(Ro);
  rmsnorm_forward(h, c.p(I.M.norm), hn, hr, Ro, dm, eps, c.s);
  float* logits = c.arena.floats(Ro * V);
  linear(c, hn, nullptr, I.M.head, logits, Ro, V, dm);
  I.logits.resize(size_t(Ro * V));
  TREX_CUDA_CHECK(cudaMemcpyAsync(I.logits.data(), logits, sizeof(float) * I.logits.size(), cudaMemcpyDeviceToHost,
                                  c.s));
  TREX_CUDA_CHECK(cudaStreamSynchronize(c.s));
  for (const auto& q : seqs) I.length[size_t(q.slot)] += q.count;
  return I.logits;
}

}  // namespace trex::cuda
