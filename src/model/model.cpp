// Model: packed-batch geometry, parameter offsets, initialisation, and the whole forward/backward (embedding,
// blocks, collapse head, final norm, LM head, cross-entropy, MTP modules).
#include "model/model.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/model_impl.hpp"
#include "nn/gemm.hpp"
#include "nn/gemm_bf16.hpp"
#include "nn/parallel_chunks.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

namespace trex::model {

using namespace detail;

// ============================================================ geometry
void detail::Seq::build(int64_t B_, int64_t T_, const int32_t* doc_ids, const std::vector<int64_t>& ratios) {
  B = B_;
  T = T_;
  N = B * T;
  pos.resize(size_t(N));
  doc_start.resize(size_t(N));
  for (int64_t b = 0; b < B; ++b) {
    int64_t start = b * T;
    for (int64_t t = 0; t < T; ++t) {
      const int64_t i = b * T + t;
      if (t > 0 && doc_ids && doc_ids[i] != doc_ids[i - 1]) start = i;
      pos[size_t(i)] = int32_t(i - start);
      doc_start[size_t(i)] = int32_t(start);
    }
  }
  ents.resize(ratios.size());
  for (size_t r = 0; r < ratios.size(); ++r) {
    Entries& e = ents[r];
    e.m = ratios[r];
    e.start.clear();
    e.idx.clear();
    e.epos.clear();
    e.base.resize(size_t(N));
    e.nvis.resize(size_t(N));
    e.max_nvis = 0;
    int64_t i = 0;
    while (i < N) {  // one document at a time
      int64_t len = 1;
      while (i + len < N && doc_start[size_t(i + len)] == i) ++len;
      const int32_t base = int32_t(e.start.size());
      for (int64_t blk = 0; blk < len / e.m; ++blk) {
        e.start.push_back(int32_t(i + blk * e.m));
        e.idx.push_back(int32_t(blk));
        e.epos.push_back(int32_t(blk * e.m));
      }
      for (int64_t j = i; j < i + len; ++j) {
        e.base[size_t(j)] = base;
        e.nvis[size_t(j)] = int32_t((pos[size_t(j)] + 1) / e.m);  // only complete blocks are visible
        e.max_nvis = std::max(e.max_nvis, e.nvis[size_t(j)]);
      }
      i += len;
    }
    e.NE = int64_t(e.start.size());
  }
}

const Entries& detail::Seq::entries(int64_t m) const {
  for (const auto& e : ents)
    if (e.m == m) return e;
  throw Error("internal: no compressed-entry grid for ratio " + std::to_string(m));
}

// ============================================================ offsets
detail::BlockOff::BlockOff(const ModelConfig& c, ParamStore& st, const std::string& p, int64_t l)
    : layer(l), ratio(c.ratio(l)), kind(c.kind(l)), hash(c.is_hash_layer(l)), prefix(p) {
  auto off = [&](const std::string& n) { return st.held_offset(p + n); };  // -1: held by another rank
  attn_norm = off("attn_norm.weight");
  ffn_norm = off("ffn_norm.weight");
  hc_attn = {off("hc_attn_fn"), off("hc_attn_base"), off("hc_attn_scale")};
  hc_ffn = {off("hc_ffn_fn"), off("hc_ffn_base"), off("hc_ffn_scale")};
  wq_a = off("attn.wq_a.weight");
  q_norm = off("attn.q_norm.weight");
  wq_b = off("attn.wq_b.weight");
  wkv = off("attn.wkv.weight");
  kv_norm = off("attn.kv_norm.weight");
  wo_a = off("attn.wo_a.weight");
  wo_b = off("attn.wo_b.weight");
  sink = off("attn.attn_sink");
  if (ratio != 0)
    cmp = {off("attn.compressor.wkv.weight"), off("attn.compressor.wgate.weight"), off("attn.compressor.ape"),
           off("attn.compressor.norm.weight")};
  if (kind == AttnKind::CSA) {
    iwq_b = off("attn.indexer.wq_b.weight");
    iwp = off("attn.indexer.weights_proj.weight");
    icmp = {off("attn.indexer.compressor.wkv.weight"), off("attn.indexer.compressor.wgate.weight"),
            off("attn.indexer.compressor.ape"), off("attn.indexer.compressor.norm.weight")};
  }
  gate = off("ffn.gate.weight");
  if (hash)
    tid2eid = st.int_param(p + "ffn.gate.tid2eid");
  else
    gate_bias = off("ffn.gate.bias");
  for (int64_t e = 0; e < c.n_routed_experts; ++e) {
    const std::string ep = "ffn.experts." + std::to_string(e) + ".";
    w1.push_back(off(ep + "w1.weight"));
    w3.push_back(off(ep + "w3.weight"));
    w2.push_back(off(ep + "w2.weight"));
  }
  if (c.n_shared_experts > 0) {
    sw1 = off("ffn.shared_experts.w1.weight");
    sw3 = off("ffn.shared_experts.w3.weight");
    sw2 = off("ffn.shared_experts.w2.weight");
  }
}

// ============================================================ implementation state
struct MtpOff {
  int64_t e_proj, h_proj, enorm, hnorm, norm;
  HcOff hc_head;
};

struct MtpSaved {
  int64_t Tm = 0;
  float *Xin, *hn, *hn_rstd, *e, *en, *en_rstd, *Xm;  // inputs to the MTP block
  HcSaved head;
  float *h, *fn, *fn_rstd, *logits;
  int32_t* tgt;
  int64_t count = 0;
  std::vector<int32_t> doc;  // [B*Tm]
};

// One micro-batch's activations (a slot). forward_backward and forward use slot 0; pipeline stages keep one slot
// per micro-batch in flight (1F1B), each with its own arena, geometry and saved tensors.
struct Acts {
  nn::Arena arena;
  Seq seq;
  std::vector<Seq> mseq;
  std::vector<BlockSaved> saved;
  std::vector<MtpSaved> mtp;
  HcSaved head_saved;
  Batch bt;
  int64_t first = 0, last = 0;  // layer range of the last forward
  bool training = false, backward_pending = false;
  float *X0 = nullptr, *h = nullptr, *hn = nullptr, *hn_rstd = nullptr, *logits = nullptr, *dlogits = nullptr;
  // Under bf16 operand copies (nn::bf16_operand_copies) the logits' gradients are kept in bf16 only (the head's
  // backward products read nothing else): dlogits / dml stay null, dlogits_bf16 / dml_bf16 hold them.
  uint16_t* dlogits_bf16 = nullptr;
  std::vector<uint16_t*> dml_bf16;
  const float* Xout = nullptr;  // streams leaving layer last-1
  int32_t* tgt = nullptr;
  int64_t ce_count = 0;
  std::vector<float*> dml;
  double idx_loss = 0, bal_loss = 0;
};

struct Model::Impl {
  std::vector<BlockOff> blocks;
  std::vector<int64_t> ratios;  // distinct non-zero ratios
  nn::RopeTable rope_a, rope_b;
  int64_t rope_len = 0;
  std::vector<std::unique_ptr<Acts>> acts;  // slots (created on first use)
  std::vector<std::vector<int64_t>> load;   // per MoE block: expert loads of its most recent forward (after
                                            // update_gate_bias: summed over the process group)
  std::vector<std::vector<int64_t>> local_load;  // the same, this rank's own (zeros for blocks it never runs)
  std::vector<MtpOff> mtp_off;
  int64_t embed, head, norm;
  HcOff hc_head;
  Acts& slot(int i) {
    if (i < 0 || i > 4096) throw Error("model: activation slot " + std::to_string(i) + " out of range");
    if (size_t(i) >= acts.size()) acts.resize(size_t(i) + 1);
    if (!acts[size_t(i)]) acts[size_t(i)] = std::make_unique<Acts>();
    return *acts[size_t(i)];
  }
};

Model::Model(const ModelConfig& cfg, ProcessGroup* pg, const ParamPlacement& place)
    : cfg_(cfg), store_(cfg, place), pg_(pg ? pg : &single_process_group()), impl_(std::make_unique<Impl>()) {
  cfg_.validate();
  auto& I = *impl_;
  for (int64_t l = 0; l < cfg_.num_hidden_layers; ++l) I.blocks.emplace_back(cfg_, store_, "layers." + std::to_string(l) + ".", l);
  for (int64_t i = 0; i < cfg_.num_nextn_predict_layers; ++i) {
    const std::string p = "mtp." + std::to_string(i) + ".";
    I.blocks.emplace_back(cfg_, store_, p, cfg_.num_hidden_layers + i);
    auto off = [&](const std::string& n) { return store_.held_offset(p + n); };
    I.mtp_off.push_back(MtpOff{off("e_proj.weight"), off("h_proj.weight"), off("enorm.weight"), off("hnorm.weight"),
                               off("norm.weight"), HcOff{off("hc_head_fn"), off("hc_head_base"), off("hc_head_scale")}});
  }
  for (auto r : cfg_.compress_ratios)
    if (r != 0 && std::find(I.ratios.begin(), I.ratios.end(), r) == I.ratios.end()) I.ratios.push_back(r);
  I.embed = store_.held_offset("embed.weight");
  I.head = store_.held_offset("head.weight");
  I.norm = store_.held_offset("norm.weight");
  I.hc_head = {store_.held_offset("hc_head_fn"), store_.held_offset("hc_head_base"),
               store_.held_offset("hc_head_scale")};
  // Every block reports E loads (zeros until it runs): under pipeline parallelism a stage never runs the other
  // stages' blocks, and the loads are summed over all ranks in update_gate_bias.
  I.load.assign(I.blocks.size(), std::vector<int64_t>(size_t(cfg_.n_routed_experts), 0));
  I.local_load = I.load;
}

Model::~Model() = default;

// ============================================================ init
std::vector<int64_t> make_hash_table(const ModelConfig& cfg, int64_t layer) {
  const int64_t V = cfg.vocab_size, E = cfg.n_routed_experts, k = cfg.num_experts_per_tok;
  Rng rng(cfg.hash_seed + uint64_t(layer));
  std::vector<int64_t> stream;
  std::vector<int64_t> perm(static_cast<size_t>(E));
  while (int64_t(stream.size()) < V * k) {  // concatenated random permutations: loads balanced
    for (int64_t e = 0; e < E; ++e) perm[size_t(e)] = e;
    rng.shuffle(perm);
    stream.insert(stream.end(), perm.begin(), perm.end());
  }
  stream.resize(size_t(V * k));
  // a token's k slots may straddle two permutations: swap duplicates with later positions (loads unchanged)
  for (int64_t v = 0; v < V; ++v)
    for (int64_t j = 1; j < k; ++j) {
      auto dup = [&](int64_t val) {
        for (int64_t q = 0; q < j; ++q)
          if (stream[size_t(v * k + q)] == val) return true;
        return false;
      };
      if (!dup(stream[size_t(v * k + j)])) continue;
      for (int64_t q = (v + 1) * k; q < V * k; ++q)
        if (!dup(stream[size_t(q)])) {
          std::swap(stream[size_t(v * k + j)], stream[size_t(q)]);
          break;
        }
    }
  return stream;
}

void init_params(ParamStore& store, const ModelConfig& cfg, uint64_t seed) {
  // Walks the canonical table (stream t = canonical index), so a sharded rank draws exactly the values one
  // process gives its tensors.
  auto params = store.params();
  for (const ParamInfo& p : store.table()) {
    const uint64_t t = uint64_t(p.canonical_index);
    float* w = params.data() + p.offset;
    auto ends = [&](const char* s) {
      const std::string suf(s);
      return p.name.size() >= suf.size() && p.name.compare(p.name.size() - suf.size(), suf.size(), suf) == 0;
    };
    if (ends("norm.weight") || ends("_scale")) {
      std::fill(w, w + p.numel, 1.0f);
    } else if (ends("_base") || ends("attn_sink") || ends("gate.bias")) {
      std::fill(w, w + p.numel, 0.0f);
    } else {
      Rng r = Rng::derive(seed, t);
      for (int64_t i = 0; i < p.numel; ++i) w[i] = float(cfg.init_std * r.normal());
    }
  }
  for (const auto& p : store.int_table()) {
    const int64_t layer = std::stoll(p.name.substr(7, p.name.find('.', 7) - 7));  // "layers.N.ffn.gate.tid2eid"
    auto t = make_hash_table(cfg, layer);
    std::copy(t.begin(), t.end(), store.int_params().data() + p.offset);
  }
}

void Model::init(uint64_t seed) {
  init_params(store_, cfg_, seed);
  zero_grad();
}

// Both over all threads (nn::for_chunks): a pass over every gradient (84 MB at the bench preset) on one core would
// leave the other waiting.
void Model::zero_grad() {
  auto g = store_.grads();
  nn::for_chunks(g.data(), int64_t(g.size()), [](float* b, float* e) { std::fill(b, e, 0.0f); });
}

void Model::scale_grads(float s) {
  auto g = store_.grads();
  nn::for_chunks(g.data(), int64_t(g.size()), [s](float* b, float* e) {
    for (float* x = b; x < e; ++x) *x *= s;
  });
}

void Model::reduce_gradients() {
  if (pg_->size() == 1) return;
  pg_->all_reduce_sum(store_.grads());
  scale_grads(1.0f / float(pg_->size()));
}

// ============================================================ blocks
namespace {

double block_forward(Ctx& c, const Seq& seq, const BlockOff& b, const float* X, const int32_t* tokens, BlockSaved& s,
                     double* idx_loss) {
  const int64_t N = seq.N, d = c.cfg.hidden_size, n = c.cfg.hc_mult;
  const float eps = float(c.cfg.rms_norm_eps);
  s.ya = c.arena.floats(N * d);
  hc_pre_forward(c, X, N, b.hc_attn, s.hca, s.ya);
  s.ya_rstd = c.arena.floats(N);
  s.xa = c.arena.floats(N * d);
  nn::rmsnorm_forward(s.ya, c.p(b.attn_norm), s.xa, s.ya_rstd, N, d, eps);
  s.attn_out = c.arena.floats(N * d);
  *idx_loss += attention_forward(c, seq, b, s.xa, s.at, s.attn_out);
  s.Xmid = c.arena.floats(N * n * d);
  hc_post_forward(c, s.attn_out, X, s.hca, N, s.Xmid);
  s.yf = c.arena.floats(N * d);
  hc_pre_forward(c, s.Xmid, N, b.hc_ffn, s.hcf, s.yf);
  s.yf_rstd = c.arena.floats(N);
  s.xf = c.arena.floats(N * d);
  nn::rmsnorm_forward(s.yf, c.p(b.ffn_norm), s.xf, s.yf_rstd, N, d, eps);
  s.ffn_out = c.arena.floats(N * d);
  const double bal = moe_forward(c, seq, b, s.xf, tokens, s.moe, s.ffn_out);
  s.Xout = c.arena.floats(N * n * d);
  hc_post_forward(c, s.ffn_out, s.Xmid, s.hcf, N, s.Xout);
  return bal;
}

// dXout: gradient wrt the block output; dX (zeroed by the caller) receives the gradient wrt the block input.
void block_backward(Ctx& c, const Seq& seq, const BlockOff& b, const float* X, const BlockSaved& s,
                    const float* dXout, float* dX) {
  const int64_t N = seq.N, d = c.cfg.hidden_size, n = c.cfg.hc_mult;
  float* dXmid = c.arena.zeros(N * n * d);
  float* dF = c.arena.floats(N * d);
  float* dpost = c.arena.floats(N * n);
  float* dM = c.arena.floats(N * n * n);
  hc_post_backward(c, s.ffn_out, s.Xmid, s.hcf, N, dXout, dF, dpost, dM, dXmid);
  float* dxf = c.arena.zeros(N * d);
  moe_backward(c, seq, b, s.moe, dF, dxf);
  float* dyf = c.arena.floats(N * d);
  nn::rmsnorm_backward(s.yf, c.p(b.ffn_norm), s.yf_rstd, dxf, dyf, c.g(b.ffn_norm), N, d, false);
  hc_pre_backward(c, N, b.hc_ffn, s.hcf, dyf, dpost, dM, dXmid);
  hc_post_backward(c, s.attn_out, X, s.hca, N, dXmid, dF, dpost, dM, dX);
  float* dxa = c.arena.zeros(N * d);
  attention_backward(c, seq, b, s.at, dF, dxa);
  float* dya = c.arena.floats(N * d);
  nn::rmsnorm_backward(s.ya, c.p(b.attn_norm), s.ya_rstd, dxa, dya, c.g(b.attn_norm), N, d, false);
  hc_pre_backward(c, N, b.hc_attn, s.hca, dya, dpost, dM, dX);
}

}  // namespace

// ============================================================ forward / backward
int64_t make_targets(const Batch& bt, int64_t shift, int64_t Tm, int32_t* tgt) {
  int64_t count = 0;
  for (int64_t b = 0; b < bt.B; ++b)
    for (int64_t t = 0; t < Tm; ++t) {
      const int64_t i = b * bt.T + t, j = i + shift;
      int32_t v = -1;
      if (t + shift < bt.T && (!bt.loss_mask || bt.loss_mask[j]) && (!bt.doc_ids || bt.doc_ids[j] == bt.doc_ids[i]))
        v = bt.tokens[j];
      tgt[b * Tm + t] = v;
      count += v >= 0;
    }
  return count;
}

int64_t count_targets(const Batch& bt, int64_t shift, int64_t Tm) {
  int64_t count = 0;
  for (int64_t b = 0; b < bt.B; ++b)
    for (int64_t t = 0; t < Tm; ++t) {
      const int64_t i = b * bt.T + t, j = i + shift;
      count += t + shift < bt.T && (!bt.loss_mask || bt.loss_mask[j]) && (!bt.doc_ids || bt.doc_ids[j] == bt.doc_ids[i]);
    }
  return count;
}

namespace {

Ctx make_ctx(Model& m, Acts& A, const ModelConfig& cfg, ParamStore& st, Model::Impl& I, bool training) {
  return Ctx{cfg, st.params().data(), st.grads().data(), A.arena, m.expert_group(), training, omp_get_max_threads(),
             I.rope_a, I.rope_b};
}

// Forward of layers [l0, l1) for one slot. l0 == 0: embedding of the tokens; else Xin (copied) enters layer l0.
// l1 == L: the head, the cross-entropy and the MTP modules run too. Losses: this range's share.
Losses forward_range(Model& m, Model::Impl& I, Acts& A, const ModelConfig& cfg, ParamStore& st, const Batch& bt,
                     int64_t l0, int64_t l1, const float* Xin, bool training, bool again = false) {
  if (bt.B <= 0 || bt.T <= 0 || !bt.tokens) throw Error("model: empty batch");
  const int64_t Lm = cfg.num_hidden_layers;
  if (l0 < 0 || l1 > Lm || l0 >= l1) throw Error("model: layer range [" + std::to_string(l0) + ", " +
                                                   std::to_string(l1) + ") is not a non-empty part of 0.." +
                                                   std::to_string(Lm));
  if (l0 > 0 && !Xin) throw Error("model: a stage that does not start at layer 0 needs its input streams");
  const int64_t B = bt.B, T = bt.T, N = B * T, d = cfg.hidden_size, n = cfg.hc_mult, V = cfg.vocab_size;
  for (int64_t i = 0; i < N; ++i)
    if (bt.tokens[i] < 0 || bt.tokens[i] >= V)
      throw Error("model: token id " + std::to_string(bt.tokens[i]) + " at position " + std::to_string(i) +
                  " outside the vocabulary [0, " + std::to_string(V) + ")");
  if (T > I.rope_len) {  // tables sized to the longest sequence seen (positions restart per document)
    const int64_t len = std::max<int64_t>(T, 64);
    I.rope_a = window_rope_table(cfg, len);
    I.rope_b = compressed_rope_table(cfg, len);
    I.rope_len = len;
  }
  A.arena.reset();
  A.saved.resize(I.blocks.size());
  A.mtp.resize(size_t(cfg.num_nextn_predict_layers));
  A.mseq.resize(size_t(cfg.num_nextn_predict_layers));
  A.bt = bt;
  A.first = l0;
  A.last = l1;
  A.training = training;
  A.backward_pending = training;
  Ctx c = make_ctx(m, A, cfg, st, I, training);
  c.indexer_grads = !again;
  A.seq.build(B, T, bt.doc_ids, I.ratios);
  A.idx_loss = 0;
  A.bal_loss = 0;
  Losses L;
  A.X0 = A.arena.floats(N * n * d);
  if (l0 == 0) {
    // embedding: every stream starts as the token's embedding
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < N; ++i)
      for (int64_t k = 0; k < n; ++k)
        std::memcpy(A.X0 + (i * n + k) * d, c.p(I.embed) + int64_t(bt.tokens[i]) * d, size_t(d) * 4);
  } else {
    std::memcpy(A.X0, Xin, size_t(N * n * d) * 4);
  }
  const float* X = A.X0;
  for (int64_t l = l0; l < l1; ++l) {
    A.bal_loss += block_forward(c, A.seq, I.blocks[size_t(l)], X, bt.tokens, A.saved[size_t(l)], &A.idx_loss);
    I.load[size_t(l)] = I.local_load[size_t(l)] = A.saved[size_t(l)].moe.load;
    X = A.saved[size_t(l)].Xout;
  }
  A.Xout = X;
  if (l1 < Lm) {
    L.balance = A.bal_loss;
    L.indexer = A.idx_loss;
    L.total = L.balance + L.indexer;
    return L;
  }
  const float eps = float(cfg.rms_norm_eps);
  A.h = A.arena.floats(N * d);
  hc_head_forward(c, X, N, I.hc_head, A.head_saved, A.h);
  A.hn = A.arena.floats(N * d);
  A.hn_rstd = A.arena.floats(N);
  nn::rmsnorm_forward(A.h, c.p(I.norm), A.hn, A.hn_rstd, N, d, eps);
  A.logits = A.arena.floats(N * V);
  nn::linear(A.hn, c.p(I.head), A.logits, N, V, d);
  A.tgt = A.arena.ints(N);
  A.ce_count = make_targets(bt, 1, T, A.tgt);
  L.ce_count = A.ce_count;
  const bool bf16_grads = nn::bf16_operand_copies();
  A.dlogits = bf16_grads ? nullptr : A.arena.floats(N * V);
  A.dlogits_bf16 = bf16_grads ? A.arena.bf16s(N * V) : nullptr;
  L.ce = nn::softmax_xent(A.logits, A.tgt, A.dlogits, N, V,
                          !A.ce_count ? 0.0f : bt.ce_denominator > 0 ? float(1.0 / bt.ce_denominator)
                                                                     : 1.0f / float(A.ce_count),
                          A.dlogits_bf16);

  // MTP modules (§8, §16.3)
  const int64_t n_mtp = cfg.num_nextn_predict_layers;
  const float* Xprev = X;
  int64_t Tprev = T;
  double mtp_sum = 0;
  A.dml.assign(size_t(n_mtp), nullptr);
  A.dml_bf16.assign(size_t(n_mtp), nullptr);
  for (auto& ms : A.mtp) ms.Tm = 0;  // modules beyond a too-short batch stay empty
  for (int64_t i = 0; i < n_mtp; ++i) {
    MtpSaved& ms = A.mtp[size_t(i)];
    const MtpOff& mo = I.mtp_off[size_t(i)];
    const int64_t Tm = Tprev - 1;
    ms.Tm = Tm;
    if (Tm <= 0) break;
    const int64_t Nm = B * Tm;
    ms.doc.resize(size_t(Nm));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < Tm; ++t) ms.doc[size_t(b * Tm + t)] = bt.doc_ids ? bt.doc_ids[b * T + t] : 0;
    Seq& sq = A.mseq[size_t(i)];
    sq.build(B, Tm, ms.doc.data(), I.ratios);
    ms.Xin = A.arena.floats(Nm * n * d);
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < B; ++b)
      std::memcpy(ms.Xin + b * Tm * n * d, Xprev + b * Tprev * n * d, size_t(Tm * n * d) * 4);
    ms.hn = A.arena.floats(Nm * n * d);
    ms.hn_rstd = A.arena.floats(Nm * n);
    nn::rmsnorm_forward(ms.Xin, c.p(mo.hnorm), ms.hn, ms.hn_rstd, Nm * n, d, eps);
    ms.e = A.arena.floats(Nm * d);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < Tm; ++t)
        std::memcpy(ms.e + (b * Tm + t) * d, c.p(I.embed) + int64_t(bt.tokens[b * T + t + i + 1]) * d, size_t(d) * 4);
    ms.en = A.arena.floats(Nm * d);
    ms.en_rstd = A.arena.floats(Nm);
    nn::rmsnorm_forward(ms.e, c.p(mo.enorm), ms.en, ms.en_rstd, Nm, d, eps);
    float* ep = A.arena.floats(Nm * d);
    nn::linear(ms.en, c.p(mo.e_proj), ep, Nm, d, d);
    ms.Xm = A.arena.floats(Nm * n * d);
    nn::linear(ms.hn, c.p(mo.h_proj), ms.Xm, Nm * n, d, d);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < Nm; ++r)
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < d; ++j) ms.Xm[(r * n + k) * d + j] += ep[r * d + j];
    const size_t bi = size_t(Lm + i);
    A.bal_loss += block_forward(c, sq, I.blocks[bi], ms.Xm, nullptr, A.saved[bi], &A.idx_loss);
    I.load[bi] = I.local_load[bi] = A.saved[bi].moe.load;
    ms.h = A.arena.floats(Nm * d);
    hc_head_forward(c, A.saved[bi].Xout, Nm, mo.hc_head, ms.head, ms.h);
    ms.fn = A.arena.floats(Nm * d);
    ms.fn_rstd = A.arena.floats(Nm);
    nn::rmsnorm_forward(ms.h, c.p(mo.norm), ms.fn, ms.fn_rstd, Nm, d, eps);
    ms.logits = A.arena.floats(Nm * V);
    nn::linear(ms.fn, c.p(I.head), ms.logits, Nm, V, d);
    ms.tgt = A.arena.ints(Nm);
    ms.count = make_targets(bt, i + 2, Tm, ms.tgt);
    L.mtp_count += ms.count;
    if (bf16_grads)
      A.dml_bf16[size_t(i)] = A.arena.bf16s(Nm * V);
    else
      A.dml[size_t(i)] = A.arena.floats(Nm * V);
    const double mtp_den = bt.mtp_denominator > 0 ? bt.mtp_denominator : double(ms.count);
    const float scale = ms.count ? float(cfg.mtp_loss_weight / double(n_mtp) / mtp_den) : 0.0f;
    const double lsum = nn::softmax_xent(ms.logits, ms.tgt, A.dml[size_t(i)], Nm, V, scale, A.dml_bf16[size_t(i)]);
    mtp_sum += ms.count ? lsum / (cfg.mtp_loss_weight / double(n_mtp)) : 0.0;
    Xprev = A.saved[bi].Xout;
    Tprev = Tm;
  }
  L.mtp = n_mtp ? mtp_sum / double(n_mtp) : 0.0;
  L.balance = A.bal_loss;
  L.indexer = A.idx_loss;
  L.total = L.ce + cfg.mtp_loss_weight * L.mtp + L.balance + L.indexer;
  return L;
}

// Backward of the slot's range. dXout: gradient wrt the streams leaving layer last-1 (ignored when the range
// ends with the head). Returns the gradient wrt the range's input streams, or nullptr when the range starts
// at layer 0 (it went into the embedding).
const float* backward_range(Model& m, Model::Impl& I, Acts& A, const ModelConfig& cfg, ParamStore& st,
                            const float* dXout_stage) {
  if (!A.backward_pending) throw Error("model: backward without a training forward in this slot");
  A.backward_pending = false;
  Ctx c = make_ctx(m, A, cfg, st, I, true);
  const Batch& bt = A.bt;
  const int64_t B = bt.B, T = bt.T, N = B * T, d = cfg.hidden_size, n = cfg.hc_mult, V = cfg.vocab_size;
  const int64_t Lm = cfg.num_hidden_layers;
  float* dXL = A.arena.zeros(N * n * d);  // gradient wrt the range's output X (main head + MTP inputs)
  if (A.last < Lm) {
    if (!dXout_stage) throw Error("model: a stage that does not end with the head needs its output gradient");
    std::memcpy(dXL, dXout_stage, size_t(N * n * d) * 4);
  } else {
    const int64_t n_mtp = cfg.num_nextn_predict_layers;
    // Chained MTP (§8): module i reads the block output of module i-1 (module 0: X), so the backward runs from
    // the last module down, each adding its input gradient to the output gradient of the module before it.
    std::vector<float*> dXout(size_t(n_mtp), nullptr);  // gradient wrt each module's block output
    for (int64_t i = 0; i < n_mtp; ++i)
      if (A.mtp[size_t(i)].Tm > 0) dXout[size_t(i)] = A.arena.zeros(B * A.mtp[size_t(i)].Tm * n * d);
    for (int64_t i = n_mtp - 1; i >= 0; --i) {
      MtpSaved& ms = A.mtp[size_t(i)];
      const MtpOff& mo = I.mtp_off[size_t(i)];
      const int64_t Tm = ms.Tm;
      if (Tm <= 0) continue;
      const int64_t Nm = B * Tm;
      const size_t bi = size_t(Lm + i);
      float* dfn = A.arena.floats(Nm * d);
      nn::linear_backward(ms.fn, c.p(I.head), A.dml[size_t(i)], dfn, c.g(I.head), Nm, V, d, false,
                          A.dml_bf16[size_t(i)]);
      float* dh = A.arena.floats(Nm * d);
      nn::rmsnorm_backward(ms.h, c.p(mo.norm), ms.fn_rstd, dfn, dh, c.g(mo.norm), Nm, d, false);
      float* dXo = dXout[size_t(i)];
      hc_head_backward(c, Nm, mo.hc_head, ms.head, dh, dXo);
      float* dXm = A.arena.zeros(Nm * n * d);
      {
        const auto mark = A.arena.mark();  // the block's backward scratch is released right after
        block_backward(c, A.mseq[size_t(i)], I.blocks[bi], ms.Xm, A.saved[bi], dXo, dXm);
        A.arena.release(mark);
      }
      if (m.backward_hook()) m.backward_hook()(int64_t(bi));
      float* dhn = A.arena.floats(Nm * n * d);
      nn::linear_backward(ms.hn, c.p(mo.h_proj), dXm, dhn, c.g(mo.h_proj), Nm * n, d, d);
      float* dXin = A.arena.floats(Nm * n * d);
      nn::rmsnorm_backward(ms.Xin, c.p(mo.hnorm), ms.hn_rstd, dhn, dXin, c.g(mo.hnorm), Nm * n, d, false);
      float* dprev = i == 0 ? dXL : dXout[size_t(i - 1)];  // gradient wrt this module's input rows
      const int64_t Tprev_i = i == 0 ? T : A.mtp[size_t(i - 1)].Tm;
#pragma omp parallel for schedule(static)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < Tm * n * d; ++j) dprev[b * Tprev_i * n * d + j] += dXin[b * Tm * n * d + j];
      float* dep = A.arena.zeros(Nm * d);
#pragma omp parallel for schedule(static)
      for (int64_t r = 0; r < Nm; ++r)
        for (int64_t k = 0; k < n; ++k)
          for (int64_t j = 0; j < d; ++j) dep[r * d + j] += dXm[(r * n + k) * d + j];
      float* den = A.arena.floats(Nm * d);
      nn::linear_backward(ms.en, c.p(mo.e_proj), dep, den, c.g(mo.e_proj), Nm, d, d);
      float* de = A.arena.floats(Nm * d);
      nn::rmsnorm_backward(ms.e, c.p(mo.enorm), ms.en_rstd, den, de, c.g(mo.enorm), Nm, d, false);
      float* gE = c.g(I.embed);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < Tm; ++t) {
          float* g = gE + int64_t(bt.tokens[b * T + t + i + 1]) * d;
          const float* s = de + (b * Tm + t) * d;
          for (int64_t j = 0; j < d; ++j) g[j] += s[j];
        }
    }
    float* dhn = A.arena.floats(N * d);
    nn::linear_backward(A.hn, c.p(I.head), A.dlogits, dhn, c.g(I.head), N, V, d, false, A.dlogits_bf16);
    float* dh = A.arena.floats(N * d);
    nn::rmsnorm_backward(A.h, c.p(I.norm), A.hn_rstd, dhn, dh, c.g(I.norm), N, d, false);
    hc_head_backward(c, N, I.hc_head, A.head_saved, dh, dXL);
  }
  float* dX = dXL;
  for (int64_t l = A.last - 1; l >= A.first; --l) {
    const float* Xin = l == A.first ? A.X0 : A.saved[size_t(l - 1)].Xout;
    float* dXin = A.arena.zeros(N * n * d);
    const auto mark = A.arena.mark();
    block_backward(c, A.seq, I.blocks[size_t(l)], Xin, A.saved[size_t(l)], dX, dXin);
    A.arena.release(mark);
    if (m.backward_hook()) m.backward_hook()(l);
    dX = dXin;
  }
  if (A.first > 0) return dX;
  float* gE = c.g(I.embed);
  for (int64_t i = 0; i < N; ++i) {
    float* g = gE + int64_t(bt.tokens[i]) * d;
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < d; ++j) g[j] += dX[(i * n + k) * d + j];
  }
  return nullptr;
}

}  // namespace

Losses Model::forward_backward(const Batch& batch) {
  Acts& A = impl_->slot(0);
  const Losses L = forward_range(*this, *impl_, A, cfg_, store_, batch, 0, cfg_.num_hidden_layers, nullptr, true);
  backward_range(*this, *impl_, A, cfg_, store_, nullptr);
  return L;
}

std::span<const float> Model::forward(const Batch& batch, Losses* losses) {
  Acts& A = impl_->slot(0);
  Losses L = forward_range(*this, *impl_, A, cfg_, store_, batch, 0, cfg_.num_hidden_layers, nullptr, false);
  if (losses) *losses = L;
  return {A.logits, size_t(batch.B * batch.T * cfg_.vocab_size)};
}

std::span<const float> Model::mtp_logits() const {
  if (impl_->acts.empty()) return {};
  const Acts& A = *impl_->acts[0];
  if (A.mtp.empty() || A.mtp[0].Tm <= 0) return {};
  return {A.mtp[0].logits, size_t(A.seq.B * A.mtp[0].Tm * cfg_.vocab_size)};
}

Losses Model::stage_forward(int slot, const Batch& batch, int64_t first, int64_t last, const float* input) {
  return forward_range(*this, *impl_, impl_->slot(slot), cfg_, store_, batch, first, last, input, true);
}

Losses Model::stage_recompute(int slot, const Batch& batch, int64_t first, int64_t last, const float* input) {
  return forward_range(*this, *impl_, impl_->slot(slot), cfg_, store_, batch, first, last, input, true, true);
}

std::span<const float> Model::stage_output(int slot) const {
  const Acts& A = *impl_->acts.at(size_t(slot));
  return {A.Xout, size_t(A.seq.N * cfg_.hc_mult * cfg_.hidden_size)};
}

std::span<const float> Model::stage_backward(int slot, const float* output_grad) {
  Acts& A = impl_->slot(slot);
  const float* dX = backward_range(*this, *impl_, A, cfg_, store_, output_grad);
  if (!dX) return {};
  return {dX, size_t(A.seq.N * cfg_.hc_mult * cfg_.hidden_size)};
}

int64_t Model::n_moe_blocks() const { return int64_t(impl_->blocks.size()); }

std::span<const int64_t> Model::expert_load(int64_t block) const { return impl_->load.at(size_t(block)); }

std::span<const int32_t> Model::indexer_selection(int64_t block) const {
  const auto& b = impl_->blocks.at(size_t(block));
  if (b.kind != AttnKind::CSA || impl_->acts.empty()) return {};
  const Acts& A = *impl_->acts[0];
  const Seq& sq = b.layer < cfg_.num_hidden_layers ? A.seq : A.mseq[size_t(b.layer - cfg_.num_hidden_layers)];
  return {A.saved[size_t(block)].at.sel, size_t(sq.N * cfg_.index_topk)};
}

void Model::update_gate_bias(double rate) {
  if (rate <= 0) rate = cfg_.bias_update_rate;
  // Data parallelism: every rank must apply the same update, from the loads of the whole (global) batch.
  if (pg_->size() > 1) {
    std::vector<float> buf;
    // This rank's own loads (a pipeline stage contributes zeros for the other stages' blocks).
    for (const auto& ld : impl_->local_load)
      for (auto v : ld) buf.push_back(float(v));  // counts < 2^24: exact in fp32
    pg_->all_reduce_sum(buf);
    size_t k = 0;
    for (auto& ld : impl_->load)
      for (auto& v : ld) v = int64_t(buf[k++]);
  }
  for (size_t bi = 0; bi < impl_->blocks.size(); ++bi) {
    const auto& b = impl_->blocks[bi];
    if (b.hash || b.gate_bias < 0) continue;  // gate_bias < 0: the block lives on another stage
    const auto& load = impl_->load[bi];
    if (load.empty()) continue;
    apply_gate_bias_update(store_.params().data() + b.gate_bias, load, rate);
  }
}

void apply_gate_bias_update(float* bias, std::span<const int64_t> load, double rate) {
  double mean = 0;
  for (auto v : load) mean += double(v);
  mean /= double(load.size());
  for (size_t e = 0; e < load.size(); ++e) {
    const double diff = mean - double(load[e]);
    bias[e] += float(rate * double((diff > 0) - (diff < 0)));
  }
}

size_t Model::arena_bytes() const { return impl_->acts.empty() ? 0 : impl_->acts[0]->arena.high_water_bytes(); }
int64_t Model::arena_regrowths() const { return impl_->acts.empty() ? 0 : impl_->acts[0]->arena.regrowths(); }

}  // namespace trex::model
