// Decoder: incremental inference with per-sequence caches (see decode.hpp). The per-position parts of a block
// (mHC mixes, norms, projections, MoE) reuse the training components on the new rows; attention is re-derived
// here against the caches, in the same floating-point order as attention.cpp so both paths agree closely.
#include "model/decode.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "model/model_impl.hpp"
#include "nn/gemm.hpp"
#include "nn/vec_math.hpp"
#include "util/error.hpp"

namespace trex::model {

using namespace detail;

// ------------------------------------------------------------------ per-sequence caches
namespace {

// One token-level compressor's running state (§4): the projected rows (C, gate logits Z incl. ape) of the last
// 2m positions in a ring (the pending tail of the current block and the previous block, which the overlapping
// compressor also pools), plus every completed entry (normalised, rotated).
struct CompressorCache {
  int64_t m = 0, cdim = 0, width = 0;  // width = (overlap ? 2 : 1) * cdim
  bool overlap = false;
  std::vector<float> C, Z;        // [2m, width] ring indexed by position % 2m
  std::vector<float> entries;     // [n_entries, cdim]
  int64_t n_entries = 0;

  void init(int64_t m_, int64_t cdim_, bool overlap_) {
    m = m_;
    cdim = cdim_;
    overlap = overlap_;
    width = (overlap ? 2 : 1) * cdim;
    C.assign(size_t(2 * m * width), 0.0f);
    Z.assign(size_t(2 * m * width), 0.0f);
    entries.clear();
    n_entries = 0;
  }
  const float* entry(int64_t e) const { return entries.data() + e * cdim; }
  size_t bytes() const { return (C.capacity() + Z.capacity() + entries.capacity()) * sizeof(float); }
};

}  // namespace

struct DecodeState::Layer {
  int64_t window = 0, hd = 0;
  std::vector<float> kv;  // [window, hd] ring indexed by position % window (post-RoPE K == V)
  bool has_cmp = false, has_idx = false;
  CompressorCache cmp, idx;  // main compressor (hd), indexer compressor (c_I, CSA only)
};

DecodeState::DecodeState() = default;
DecodeState::~DecodeState() = default;
DecodeState::DecodeState(DecodeState&&) noexcept = default;
DecodeState& DecodeState::operator=(DecodeState&&) noexcept = default;

size_t DecodeState::cache_bytes() const {
  size_t b = 0;
  for (const auto& l : layers_) {
    b += l.kv.capacity() * sizeof(float);
    if (l.has_cmp) b += l.cmp.bytes();
    if (l.has_idx) b += l.idx.bytes();
  }
  return b;
}

void DecodeState::clear() {
  length_ = 0;
  for (auto& l : layers_) {
    if (l.has_cmp) l.cmp.n_entries = 0;
    if (l.has_idx) l.idx.n_entries = 0;
  }
}

// ------------------------------------------------------------------ decoder
struct Decoder::Impl {
  std::vector<BlockOff> blocks;  // main layers only (MTP modules are not used for decoding)
  int64_t embed = 0, head = 0, norm = 0;
  HcOff hc_head;
  nn::RopeTable rope_a, rope_b;
  int64_t rope_len = 0;
  nn::Arena arena;
  Seq rows_seq;  // B = rows, T = 1: what the MoE's per-row code needs
};

Decoder::Decoder(Model& model) : model_(model), impl_(std::make_unique<Impl>()) {
  const ModelConfig& cfg = model.config();
  // The dense warm-up is a training stage (CSA attends to every visible entry while the indexer learns); the
  // decoder implements the trained model's top-k selection only.
  if (cfg.indexer_dense_warmup)
    throw Error("decode: the config has indexer_dense_warmup set (a training stage); decoding needs top-k CSA");
  ParamStore& st = model.store();
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l)
    impl_->blocks.emplace_back(cfg, st, "layers." + std::to_string(l) + ".", l);
  impl_->embed = st.info("embed.weight").offset;
  impl_->head = st.info("head.weight").offset;
  impl_->norm = st.info("norm.weight").offset;
  impl_->hc_head = {st.info("hc_head_fn").offset, st.info("hc_head_base").offset, st.info("hc_head_scale").offset};
}

Decoder::~Decoder() = default;

DecodeState Decoder::new_state(int64_t expected_tokens) const {
  const ModelConfig& cfg = model_.config();
  DecodeState s;
  s.layers_.resize(size_t(cfg.num_hidden_layers));
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    auto& L = s.layers_[size_t(l)];
    L.window = cfg.sliding_window;
    L.hd = cfg.head_dim;
    L.kv.assign(size_t(L.window * L.hd), 0.0f);
    const int64_t m = cfg.ratio(l);
    if (m != 0) {
      const bool csa = cfg.kind(l) == AttnKind::CSA;
      L.has_cmp = true;
      L.cmp.init(m, cfg.head_dim, csa);
      L.cmp.entries.reserve(size_t((expected_tokens / m + 1) * cfg.head_dim));
      if (csa) {
        L.has_idx = true;
        L.idx.init(m, cfg.index_head_dim, true);
        L.idx.entries.reserve(size_t((expected_tokens / m + 1) * cfg.index_head_dim));
      }
    }
  }
  return s;
}

namespace {

// Row r of the step: its sequence, its position, and where its projections live.
struct RowPlan {
  std::vector<int32_t> pos;          // [R]
  std::vector<int64_t> first, count; // per state: first row, rows
};

// Appends position p's projected rows (C, Z of width W; Z already includes ape) to the compressor and, when
// p completes a block, emits the block's entry exactly as compressor_forward pools it (softmax over slots per
// channel, RMSNorm, RoPE at the block's first position).
void compressor_push(CompressorCache& k, int64_t p, const float* Crow, const float* Zrow, const float* norm_w,
                     float eps, const nn::RopeTable& rope) {
  const int64_t m = k.m, W = k.width, cdim = k.cdim;
  const int64_t slot_row = p % (2 * m);
  std::memcpy(k.C.data() + slot_row * W, Crow, size_t(W) * sizeof(float));
  std::memcpy(k.Z.data() + slot_row * W, Zrow, size_t(W) * sizeof(float));
  if ((p + 1) % m != 0) return;  // the block is still pending
  const int64_t blk = p / m, s0 = p + 1 - m;
  const bool has_prev = k.overlap && blk > 0;
  const int64_t slots = k.overlap ? 2 * m : m, first = (k.overlap && !has_prev) ? m : 0;
  auto at = [&](const std::vector<float>& buf, int64_t slot, int64_t ch) -> float {
    if (k.overlap) {
      if (slot < m) return buf[size_t(((s0 - m + slot) % (2 * m)) * W + ch)];
      return buf[size_t(((s0 + slot - m) % (2 * m)) * W + cdim + ch)];
    }
    return buf[size_t(((s0 + slot) % (2 * m)) * W + ch)];
  };
  std::vector<float> pooled(static_cast<size_t>(cdim)), S(static_cast<size_t>(slots));
  for (int64_t ch = 0; ch < cdim; ++ch) {
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t j = first; j < slots; ++j) mx = std::max(mx, at(k.Z, j, ch));
    float sum = 0;
    for (int64_t j = first; j < slots; ++j) sum += (S[size_t(j)] = std::exp(at(k.Z, j, ch) - mx));
    float acc = 0;
    for (int64_t j = first; j < slots; ++j) {
      S[size_t(j)] /= sum;
      acc += S[size_t(j)] * at(k.C, j, ch);
    }
    pooled[size_t(ch)] = acc;
  }
  k.entries.resize(size_t((k.n_entries + 1) * cdim));
  float* out = k.entries.data() + k.n_entries * cdim;
  float rstd;
  nn::rmsnorm_forward(pooled.data(), norm_w, out, &rstd, 1, cdim, eps);
  const int32_t epos = int32_t(blk * m);
  nn::rope_apply(out, 1, 1, cdim, &epos, rope, false);
  ++k.n_entries;
}

// Attention of one block over the new rows (§3-§5): projections batched over every row, then, sequence by
// sequence and token by token, cache update and the joint softmax over window + compressed entries + sink.
void attention_step(Ctx& c, const BlockOff& b, const float* xa, const RowPlan& plan,
                    const std::vector<DecodeState::Layer*>& caches, float* out) {
  const ModelConfig& cfg = c.cfg;
  const int64_t R = int64_t(plan.pos.size()), d = cfg.hidden_size, H = cfg.num_attention_heads, hd = cfg.head_dim;
  const int64_t qr = cfg.q_lora_rank, G = cfg.o_groups, ro = cfg.o_lora_rank, w = cfg.sliding_window;
  const float eps = float(cfg.rms_norm_eps);
  const nn::RopeTable& rope = b.ratio == 0 ? c.rope_a : c.rope_b;
  const int32_t* pos = plan.pos.data();
  // query, K == V
  float* cq_raw = c.arena.floats(R * qr);
  float* rstd = c.arena.floats(R * std::max<int64_t>(H, 1));
  float* cq = c.arena.floats(R * qr);
  nn::linear(xa, c.p(b.wq_a), cq_raw, R, qr, d);
  nn::rmsnorm_forward(cq_raw, c.p(b.q_norm), cq, rstd, R, qr, eps);
  float* q_raw = c.arena.floats(R * H * hd);
  float* q = c.arena.floats(R * H * hd);
  nn::linear(cq, c.p(b.wq_b), q_raw, R, H * hd, qr);
  nn::rmsnorm_forward(q_raw, nullptr, q, rstd, R * H, hd, eps);
  nn::rope_apply(q, R, H, hd, pos, rope, false);
  float* kv_raw = c.arena.floats(R * hd);
  float* kv = c.arena.floats(R * hd);
  nn::linear(xa, c.p(b.wkv), kv_raw, R, hd, d);
  nn::rmsnorm_forward(kv_raw, c.p(b.kv_norm), kv, rstd, R, hd, eps);
  nn::rope_apply(kv, R, 1, hd, pos, rope, false);
  // compressor projections (gate logits get the position-in-block embedding)
  const int64_t m = b.ratio;
  const bool csa = b.kind == AttnKind::CSA;
  auto project = [&](const CmpOff& off, int64_t width, float*& C, float*& Z) {
    C = c.arena.floats(R * width);
    Z = c.arena.floats(R * width);
    nn::linear(xa, c.p(off.wkv), C, R, width, d);
    nn::linear(xa, c.p(off.wgate), Z, R, width, d);
    const float* ape = c.p(off.ape);
    for (int64_t r = 0; r < R; ++r)
      for (int64_t j = 0; j < width; ++j) Z[r * width + j] += ape[(pos[r] % m) * width + j];
  };
  float *Cc = nullptr, *Zc = nullptr, *Ci = nullptr, *Zi = nullptr, *qI = nullptr, *lam = nullptr;
  const int64_t HI = cfg.index_n_heads, cI = cfg.index_head_dim, topk = cfg.index_topk;
  if (m != 0) project(b.cmp, (csa ? 2 : 1) * hd, Cc, Zc);
  if (csa) {
    project(b.icmp, 2 * cI, Ci, Zi);
    qI = c.arena.floats(R * HI * cI);
    nn::linear(cq, c.p(b.iwq_b), qI, R, HI * cI, qr);
    nn::rope_apply(qI, R, HI, cI, pos, c.rope_b, false);
    lam = c.arena.floats(R * HI);
    nn::linear(xa, c.p(b.iwp), lam, R, HI, d);
    const float lam_scale = float(1.0 / std::sqrt(double(cI) * double(HI)));
    for (int64_t i = 0; i < R * HI; ++i) lam[i] *= lam_scale;
  }
  float* o = c.arena.floats(R * H * hd);
  const float scale = float(1.0 / std::sqrt(double(hd)));
  const float* sink = c.p(b.sink);
  const int64_t n_states = int64_t(caches.size());
#pragma omp parallel if (n_states > 1)
  {
    std::vector<float> P, I;
    std::vector<int32_t> comp, sel;
    std::vector<const float*> keys;
#pragma omp for schedule(dynamic, 1)
    for (int64_t si = 0; si < n_states; ++si) {
      DecodeState::Layer& L = *caches[size_t(si)];
      for (int64_t r = plan.first[size_t(si)]; r < plan.first[size_t(si)] + plan.count[size_t(si)]; ++r) {
        const int64_t p = pos[r];
        std::memcpy(L.kv.data() + (p % w) * hd, kv + r * hd, size_t(hd) * sizeof(float));
        if (m != 0) compressor_push(L.cmp, p, Cc + r * L.cmp.width, Zc + r * L.cmp.width, c.p(b.cmp.norm), eps, rope);
        if (csa) compressor_push(L.idx, p, Ci + r * L.idx.width, Zi + r * L.idx.width, c.p(b.icmp.norm), eps, c.rope_b);
        // compressed entries this token attends to
        comp.clear();
        if (csa) {
          const int64_t nv = L.idx.n_entries;  // == floor((p + 1) / m)
          I.resize(size_t(std::max<int64_t>(nv, 1)));
          for (int64_t e = 0; e < nv; ++e) {
            float acc = 0;
            for (int64_t h = 0; h < HI; ++h) {
              const float* qh = qI + (r * HI + h) * cI;
              const float* k = L.idx.entry(e);
              float dot = 0;
              #pragma omp simd reduction(+ : dot)
              for (int64_t j = 0; j < cI; ++j) dot += qh[j] * k[j];
              acc += lam[r * HI + h] * std::max(dot, 0.0f);
            }
            I[size_t(e)] = acc;
          }
          const int64_t kt = std::min(topk, nv);
          sel.resize(size_t(std::max<int64_t>(kt, 1)));
          if (kt > 0) nn::topk_lower_index(I.data(), nv, kt, sel.data());
          comp.assign(sel.begin(), sel.begin() + kt);
        } else if (m != 0) {
          for (int64_t e = 0; e < L.cmp.n_entries; ++e) comp.push_back(int32_t(e));
        }
        // keys: the window (oldest first), then the compressed entries
        const int64_t ws = std::max<int64_t>(0, p - w + 1);
        keys.clear();
        for (int64_t t = ws; t <= p; ++t) keys.push_back(L.kv.data() + (t % w) * hd);
        for (int32_t e : comp) keys.push_back(L.cmp.entry(e));
        const int64_t nk = int64_t(keys.size());
        P.resize(size_t(nk));
        for (int64_t h = 0; h < H; ++h) {
          const float* qh = q + (r * H + h) * hd;
          float mx = sink[h];
          for (int64_t e = 0; e < nk; ++e) {
            const float* k = keys[size_t(e)];
            float dot = 0;
            #pragma omp simd reduction(+ : dot)
            for (int64_t j = 0; j < hd; ++j) dot += qh[j] * k[j];
            P[size_t(e)] = dot * scale;
            mx = std::max(mx, P[size_t(e)]);
          }
          float sum = std::exp(sink[h] - mx);  // the sink joins the denominator only
          float* Pv = P.data();
#pragma omp simd reduction(+ : sum)
          for (int64_t e = 0; e < nk; ++e) sum += (Pv[e] = nn::fast_expf(Pv[e] - mx));
          float* oh = o + (r * H + h) * hd;
          for (int64_t j = 0; j < hd; ++j) oh[j] = 0;
          for (int64_t e = 0; e < nk; ++e) {
            const float pe = P[size_t(e)] / sum;
            const float* k = keys[size_t(e)];
            for (int64_t j = 0; j < hd; ++j) oh[j] += pe * k[j];
          }
        }
      }
    }
  }
  // output de-rotation, then the grouped low-rank projection
  nn::rope_apply(o, R, H, hd, pos, rope, true);
  const int64_t gw = H * hd / G;
  float* u = c.arena.floats(R * G * ro);
  for (int64_t g = 0; g < G; ++g)
    nn::gemm(false, true, R, ro, gw, 1.0f, o + g * gw, H * hd, c.p(b.wo_a) + g * ro * gw, gw, 0.0f, u + g * ro,
             G * ro);
  nn::linear(u, c.p(b.wo_b), out, R, d, G * ro);
}

}  // namespace

std::span<const float> Decoder::step(DecodeState& state, std::span<const int32_t> tokens, bool all_positions) {
  DecodeState* s[1] = {&state};
  std::span<const int32_t> t[1] = {tokens};
  return step(std::span<DecodeState* const>(s, 1), std::span<const std::span<const int32_t>>(t, 1), all_positions);
}

std::span<const float> Decoder::step(std::span<DecodeState* const> states,
                                     std::span<const std::span<const int32_t>> tokens, bool all_positions) {
  const ModelConfig& cfg = model_.config();
  Impl& I = *impl_;
  if (states.size() != tokens.size()) throw Error("decode: " + std::to_string(states.size()) + " states but " +
                                                  std::to_string(tokens.size()) + " token lists");
  if (states.empty()) throw Error("decode: no sequences to step");
  const int64_t V = cfg.vocab_size, d = cfg.hidden_size, n = cfg.hc_mult;
  RowPlan plan;
  std::vector<int32_t> row_tokens;
  int64_t max_pos = 0;
  for (size_t si = 0; si < states.size(); ++si) {
    if (!states[si] || states[si]->layers_.size() != size_t(cfg.num_hidden_layers))
      throw Error("decode: state " + std::to_string(si) + " was not made by this decoder's new_state()");
    if (tokens[si].empty()) throw Error("decode: sequence " + std::to_string(si) + " has no new tokens");
    for (size_t j = 0; j < si; ++j)
      if (states[j] == states[si]) throw Error("decode: the same state appears twice in one step");
    plan.first.push_back(int64_t(plan.pos.size()));
    plan.count.push_back(int64_t(tokens[si].size()));
    for (size_t t = 0; t < tokens[si].size(); ++t) {
      const int32_t id = tokens[si][t];
      if (id < 0 || id >= V)
        throw Error("decode: token id " + std::to_string(id) + " outside the vocabulary [0, " + std::to_string(V) + ")");
      plan.pos.push_back(int32_t(states[si]->length_ + int64_t(t)));
      row_tokens.push_back(id);
    }
    max_pos = std::max<int64_t>(max_pos, states[si]->length_ + int64_t(tokens[si].size()));
  }
  if (max_pos > std::numeric_limits<int32_t>::max() / 2) throw Error("decode: sequence too long");
  if (max_pos > I.rope_len) {  // tables grow geometrically with the longest sequence
    const int64_t len = std::max<int64_t>({max_pos, 2 * I.rope_len, 256});
    I.rope_a = window_rope_table(cfg, len);
    I.rope_b = compressed_rope_table(cfg, len);
    I.rope_len = len;
  }
  const int64_t R = int64_t(plan.pos.size());
  // One token per sequence (decoding): batch-invariant GEMMs, so a sequence's logits do not depend on which other
  // sequences share the step. Prefill steps (many rows) keep OpenBLAS.
  std::optional<nn::BatchInvariantScope> invariant;
  if (R == int64_t(states.size())) invariant.emplace();
  I.arena.reset();
  Ctx c{cfg, model_.store().params().data(), model_.store().grads().data(), I.arena, single_process_group(), false,
        omp_get_max_threads(), I.rope_a, I.rope_b};
  I.rows_seq.build(R, 1, nullptr, {});
  const float eps = float(cfg.rms_norm_eps);
  // embedding into every stream
  float* X = I.arena.floats(R * n * d);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t k = 0; k < n; ++k)
      std::memcpy(X + (r * n + k) * d, c.p(I.embed) + int64_t(row_tokens[size_t(r)]) * d, size_t(d) * sizeof(float));
  std::vector<DecodeState::Layer*> caches(states.size());
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    const BlockOff& b = I.blocks[size_t(l)];
    HcSaved hca, hcf;
    MoeSaved moe;
    float* ya = I.arena.floats(R * d);
    float* rstd = I.arena.floats(R);
    float* xa = I.arena.floats(R * d);
    hc_pre_forward(c, X, R, b.hc_attn, hca, ya);
    nn::rmsnorm_forward(ya, c.p(b.attn_norm), xa, rstd, R, d, eps);
    float* attn_out = I.arena.floats(R * d);
    for (size_t si = 0; si < states.size(); ++si) caches[si] = &states[si]->layers_[size_t(l)];
    attention_step(c, b, xa, plan, caches, attn_out);
    float* Xmid = I.arena.floats(R * n * d);
    hc_post_forward(c, attn_out, X, hca, R, Xmid);
    float* yf = I.arena.floats(R * d);
    float* xf = I.arena.floats(R * d);
    hc_pre_forward(c, Xmid, R, b.hc_ffn, hcf, yf);
    nn::rmsnorm_forward(yf, c.p(b.ffn_norm), xf, rstd, R, d, eps);
    float* ffn_out = I.arena.floats(R * d);
    moe_forward(c, I.rows_seq, b, xf, row_tokens.data(), moe, ffn_out);
    float* Xout = I.arena.floats(R * n * d);
    hc_post_forward(c, ffn_out, Xmid, hcf, R, Xout);
    X = Xout;
  }
  for (size_t si = 0; si < states.size(); ++si) states[si]->length_ += int64_t(tokens[si].size());
  // collapse head, final norm, LM head on the rows whose logits are wanted
  int64_t Ro = R;
  const float* Xo = X;
  if (!all_positions) {
    Ro = int64_t(states.size());
    float* Xl = I.arena.floats(Ro * n * d);
    for (int64_t si = 0; si < Ro; ++si) {
      const int64_t r = plan.first[size_t(si)] + plan.count[size_t(si)] - 1;
      std::memcpy(Xl + si * n * d, X + r * n * d, size_t(n * d) * sizeof(float));
    }
    Xo = Xl;
  }
  HcSaved hs;
  float* h = I.arena.floats(Ro * d);
  hc_head_forward(c, Xo, Ro, I.hc_head, hs, h);
  float* hn = I.arena.floats(Ro * d);
  float* hr = I.arena.floats(Ro);
  nn::rmsnorm_forward(h, c.p(I.norm), hn, hr, Ro, d, eps);
  float* logits = I.arena.floats(Ro * V);
  nn::linear(hn, c.p(I.head), logits, Ro, V, d);
  return {logits, size_t(Ro * V)};
}

}  // namespace trex::model
