// Internal structures of Model: parameter offsets per block, the packed-sequence geometry (positions, documents,
// compressed-entry grids), saved activations, and the forward/backward functions of each component
// (mhc.cpp, attention.cpp, moe.cpp). Not part of the public API.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/params.hpp"
#include "model/process_group.hpp"
#include "nn/arena.hpp"
#include "nn/gemm_bf16.hpp"
#include "nn/ops.hpp"

namespace trex::model::detail {

struct Ctx {
  const ModelConfig& cfg;
  float* P;   // flat parameters
  float* Gr;  // flat gradients
  nn::Arena& arena;
  ProcessGroup& pg;
  bool training;
  int nthreads;
  const nn::RopeTable& rope_a;  // ratio-0 layers: rope_theta, no YaRN
  const nn::RopeTable& rope_b;  // compressed layers, compressors, indexer: compress_rope_theta (+ YaRN)
  // The training forward's own gradients (the indexer's KL loss trains the indexer during the forward); false
  // when a forward runs again for its backward (pipeline recompute), which must not add them a second time.
  bool indexer_grads = true;
  const float* p(int64_t off) const { return P + off; }
  float* g(int64_t off) const { return Gr + off; }
};

// The two RoPE tables of a config for positions [0, len): rope_a (ratio-0 layers: rope_theta, no YaRN) and rope_b
// (compressed layers, compressors, indexer: compress_rope_theta, YaRN when configured).
inline nn::RopeTable window_rope_table(const ModelConfig& cfg, int64_t len) {
  return nn::make_rope_table(cfg.qk_rope_head_dim, len, cfg.rope_theta, false, 1, 1, 1, 1);
}
inline nn::RopeTable compressed_rope_table(const ModelConfig& cfg, int64_t len) {
  return nn::make_rope_table(cfg.qk_rope_head_dim, len, cfg.compress_rope_theta, cfg.yarn(), cfg.rope_scaling.factor,
                             cfg.rope_scaling.original_max_position_embeddings, cfg.rope_scaling.beta_fast,
                             cfg.rope_scaling.beta_slow);
}

// n floats rounded to bf16 into the arena (nn::round_to_bf16): an operand copy that several bf16 products read in
// place (GemmCall::a_bf16 / b_bf16); callers make one only while nn::bf16_operand_copies().
inline const uint16_t* bf16_copy(Ctx& c, const float* x, int64_t n) {
  uint16_t* out = c.arena.bf16s(n);
  nn::round_to_bf16(x, out, n);
  return out;
}

// ---------------------------------------------------------------- geometry of a packed batch
struct Entries {  // compressed-entry grid for one ratio m (restarting at every document, §16.1)
  int64_t m = 0, NE = 0;
  std::vector<int32_t> start;  // [NE] global token index of the block's first token
  std::vector<int32_t> idx;    // [NE] block index inside its document
  std::vector<int32_t> epos;   // [NE] RoPE position m * idx
  std::vector<int32_t> base;   // [N] first entry of the token's document
  std::vector<int32_t> nvis;   // [N] entries visible to the token: floor((pos + 1) / m)
  int32_t max_nvis = 0;
};

struct Seq {
  int64_t B = 0, T = 0, N = 0;
  std::vector<int32_t> pos;        // [N] position inside the document
  std::vector<int32_t> doc_start;  // [N] global index of the document's first token
  std::vector<Entries> ents;       // one per distinct non-zero ratio used
  void build(int64_t B, int64_t T, const int32_t* doc_ids, const std::vector<int64_t>& ratios);
  const Entries& entries(int64_t m) const;
};

// ---------------------------------------------------------------- parameter offsets
struct HcOff {
  int64_t fn = -1, base = -1, scale = -1;
};
struct CmpOff {
  int64_t wkv = -1, wgate = -1, ape = -1, norm = -1;
};
struct BlockOff {
  int64_t layer = 0, ratio = 0;
  AttnKind kind = AttnKind::SWA;
  bool hash = false;
  std::string prefix;
  int64_t attn_norm, ffn_norm;
  HcOff hc_attn, hc_ffn;
  int64_t wq_a, q_norm, wq_b, wkv, kv_norm, wo_a, wo_b, sink;
  CmpOff cmp, icmp;
  int64_t iwq_b = -1, iwp = -1;
  int64_t gate, gate_bias = -1;
  std::vector<int64_t> w1, w3, w2;
  int64_t sw1 = -1, sw3 = -1, sw2 = -1;
  const int64_t* tid2eid = nullptr;  // [V, k] for hash layers
  BlockOff(const ModelConfig& cfg, ParamStore& store, const std::string& prefix, int64_t layer);
};

// ---------------------------------------------------------------- saved activations
struct HcSaved {  // hc mix (pre or head)
  const float* X = nullptr;  // [N, n, d] input streams
  const uint16_t* X16 = nullptr;  // X rounded once under bf16 operand copies (the mix product and its dW), else null
  float *raw = nullptr, *rho = nullptr, *mix = nullptr;  // [N, nout], [N], [N, nout]
  float *pre = nullptr, *post = nullptr, *A = nullptr, *M = nullptr;  // [N,n], [N,n], [N,n*n], [N,n*n]
};

struct CmpSaved {
  const float* x = nullptr;  // [N, d]
  const uint16_t* x16 = nullptr;  // x in bf16 under bf16 products (AttnSaved::xa16), else null
  float *Cx = nullptr, *Zx = nullptr;  // [N, kappa*c]
  float *S = nullptr, *pooled = nullptr, *rstd = nullptr, *out = nullptr;  // [NE, slots, c], [NE,c], [NE], [NE,c]
  int64_t cdim = 0, m = 0;
  bool overlap = false;
};

struct AttnSaved {
  const float* xa = nullptr;
  // Under bf16 products xa rounded once: the up to 7 products that read xa forward (q_a, kv, the compressors'
  // kv and gate, the indexer's head weights) and their weight gradients read it in place. Null otherwise.
  const uint16_t* xa16 = nullptr;
  float *cq_raw, *cq_rstd, *cq, *q_raw, *q_rstd, *q, *kv_raw, *kv_rstd, *kv;
  CmpSaved cmp, icmp;
  float *qI = nullptr, *lam = nullptr;  // indexer queries [N, HI*cI] (after RoPE), head weights [N, HI] (scaled)
  int32_t* sel = nullptr;               // [N, topk] absolute entry indices, -1 unused
  int32_t* ncomp = nullptr;             // [N] compressed keys used by each query
  int32_t* comp = nullptr;              // [N, cmax] their entry indices
  const int32_t* ws = nullptr;          // [N] each query's first window key (its document's start or i - w + 1)
  int64_t cmax = 0, kmax = 0;
  float *P = nullptr, *o = nullptr, *od = nullptr, *u = nullptr;  // probs [N,H,kmax]; o, od [N,H*c]; u [N,G*ro]
};

// Expert parallelism of one MoE call (moe_dispatch.cpp): the ranks of the expert group own contiguous ranges of
// E / ranks experts; a rank sends its routed rows (grouped by expert, hence by owner) to the owners and receives
// the rows of every rank for its own experts, regrouped by local expert for the expert GEMMs.
struct EpPlan {
  int ranks = 1, rank = 0;
  int64_t local_experts = 0, first_expert = 0;
  std::vector<int64_t> send_rows, recv_rows;  // [ranks] rows sent to / received from each rank
  std::vector<int64_t> recv_counts;           // [ranks * local_experts] rows from rank r for local expert j
  std::vector<int64_t> counts, offsets;       // [local_experts], [local_experts + 1] rows per local expert
  std::vector<int64_t> perm;                  // [rows] expert-order row i is received row perm[i]
  int64_t rows = 0;                           // rows this rank's experts process
  bool active() const { return ranks > 1; }
};
// counts: this rank's rows per (global) expert, in expert order. Exchanges the counts with the group.
void ep_plan(ProcessGroup& pg, const std::vector<int64_t>& counts, int64_t n_experts, EpPlan& p);
// Received (rank-major) rows -> expert-major rows, and back.
void ep_to_expert_order(const EpPlan& p, const float* received, float* out, int64_t row_len);
void ep_from_expert_order(const EpPlan& p, const float* in, float* to_send, int64_t row_len);

struct MoeSaved {
  const float* x = nullptr;
  const uint16_t* x16 = nullptr;  // x rounded once under bf16 products (read by the shared expert's products)
  float *s = nullptr, *a = nullptr, *w = nullptr;  // [N,E], [N,E], [N,k]
  int32_t* sel = nullptr;                           // [N,k]
  std::vector<int64_t> counts, offsets;             // per expert
  int32_t* order_tok = nullptr;                     // [N*k] token of each dispatched row
  int32_t* order_slot = nullptr;                    // [N*k] its slot
  int32_t* row_of = nullptr;                        // [N*k] dispatched row of (token, slot): order_* inverted
  float* xg = nullptr;                                            // [N*k,d] routed rows, expert order
  EpPlan ep;                                                      // where the routed rows are computed
  float *xe = nullptr, *we = nullptr;  // [ep.rows, d], [ep.rows]: rows (and routing weights) this rank's experts
                                       // process (one rank: xg and the local weights)
  float *g = nullptr, *u = nullptr, *h = nullptr;                 // [ep.rows, f] x3
  float *sg = nullptr, *su = nullptr, *sh = nullptr;              // shared expert [N, fs]
  std::vector<int64_t> load;                                      // [E]
};

struct BlockSaved {
  HcSaved hca, hcf;
  float *ya, *ya_rstd, *xa;  // hc_pre output, attn_norm
  AttnSaved at;
  float* attn_out;
  float* Xmid;
  float *yf, *yf_rstd, *xf;
  MoeSaved moe;
  float* ffn_out;
  float* Xout;
};

// ---------------------------------------------------------------- components
// mHC (mhc.cpp)
void hc_mix_forward(Ctx& c, const float* X, int64_t N, int64_t fn, int nout, HcSaved& s);
void hc_mix_backward(Ctx& c, int64_t N, int64_t fn, int nout, const HcSaved& s, const float* dmix, float* dX);
void hc_pre_forward(Ctx& c, const float* X, int64_t N, const HcOff& off, HcSaved& s, float* y);
void hc_pre_backward(Ctx& c, int64_t N, const HcOff& off, const HcSaved& s, const float* dy, const float* dpost,
                     const float* dM, float* dX);
void hc_post_forward(Ctx& c, const float* F, const float* X, const HcSaved& s, int64_t N, float* Xout);
void hc_post_backward(Ctx& c, const float* F, const float* X, const HcSaved& s, int64_t N, const float* dXout,
                      float* dF, float* dpost, float* dM, float* dX);
void hc_head_forward(Ctx& c, const float* X, int64_t N, const HcOff& off, HcSaved& s, float* h);
void hc_head_backward(Ctx& c, int64_t N, const HcOff& off, const HcSaved& s, const float* dh, float* dX);

// attention (attention.cpp). Returns the indexer loss contribution (coefficient included) of this block.
double attention_forward(Ctx& c, const Seq& seq, const BlockOff& b, const float* xa, AttnSaved& s, float* out);
void attention_backward(Ctx& c, const Seq& seq, const BlockOff& b, const AttnSaved& s, const float* dout,
                        float* dxa);

// MoE (moe.cpp). tokens may be null for non-hash blocks. Returns the sequence-balance loss of this block.
double moe_forward(Ctx& c, const Seq& seq, const BlockOff& b, const float* x, const int32_t* tokens, MoeSaved& s,
                   float* out);
void moe_backward(Ctx& c, const Seq& seq, const BlockOff& b, const MoeSaved& s, const float* dout, float* dx);

}  // namespace trex::model::detail
