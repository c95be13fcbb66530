// Internal structures of cuda::Model (not part of its API): the step context (device parameter, gradient and bf16
// pointers, cuBLASLt, the activation arena, the stream), the packed batch's geometry on the device, the saved
// activations of each component, and the components' forward/backward (gpu_mhc.cpp, gpu_attention.cpp,
// gpu_moe.cpp). They mirror model/model_impl.hpp's, function for function, so that a reader can hold the two side
// by side; the parameter offsets are the CPU model's own (detail::BlockOff).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "cuda/arena.hpp"
#include "cuda/blas.hpp"
#include "cuda/experts.hpp"
#include "cuda/stream.hpp"
#include "model/config.hpp"
#include "model/model_impl.hpp"
#include "model/process_group.hpp"

namespace trex::cuda {
class Model;
}

namespace trex::cuda::gm {

using model::ModelConfig;
using model::detail::BlockOff;
using model::detail::CmpOff;
using model::detail::HcOff;

struct DeviceRope {  // nn::RopeTable's cos / sin on the device
  const float* cos = nullptr;
  const float* sin = nullptr;
  int64_t r = 0;
};

// An nn::RopeTable's cos / sin uploaded once (DeviceRope is its view).
struct DeviceRopeTable {
  DeviceBuffer cos, sin;
  int64_t r = 0;
  void upload(const nn::RopeTable& t);
  DeviceRope view() const { return {cos.as<float>(), sin.as<float>(), r}; }
};

// x rotated by RoPE at positions pos with table r (ops.hpp's rope_apply on a DeviceRope).
void rope(float* x, int64_t n, int64_t heads, int64_t hd, const int32_t* pos, const DeviceRope& r, bool inverse,
          cudaStream_t s);

// The bytes of an arena of `requested` bytes, or (0) 85 % of the device memory free now less `reserve` (what is
// allocated after the arena), split among `sharers` processes on the device; throws trex::Error naming `what`
// when nothing is left.
size_t arena_bytes_or_free(size_t requested, size_t reserve = 0, int sharers = 1, const char* what = "arena");

struct DeviceEntries {  // detail::Entries on the device (arrays in the step arena)
  int64_t m = 0, NE = 0, max_nvis = 0;
  const int32_t *start = nullptr, *idx = nullptr, *epos = nullptr, *base = nullptr, *nvis = nullptr;
  const model::detail::Entries* host = nullptr;
};

struct DeviceSeq {  // detail::Seq on the device, plus the window starts and the tokens
  const model::detail::Seq* host = nullptr;
  int64_t B = 0, T = 0, N = 0;
  const int32_t* pos = nullptr;     // [N]
  const int32_t* ws = nullptr;      // [N] first window key: max(doc_start[i], i - window + 1)
  const int32_t* tokens = nullptr;  // [N] (null for MTP blocks: they are not hash-routed by the batch's tokens)
  std::vector<DeviceEntries> ents;
  const DeviceEntries& entries(int64_t m) const;
};

// A page-locked host buffer of floats (cudaMallocHost), grown on demand and kept: the MoE block's host staging
// (MoeHostBuffers). Pinned, so that its copies from and to the device are direct DMA and asynchronous; hence an
// upload queued from it reads it after the call returns, and the buffer may be rewritten only once the work queued
// up to that upload has completed (a stream synchronisation, or an event recorded after it).
class PinnedFloats {
 public:
  PinnedFloats() = default;
  ~PinnedFloats();
  PinnedFloats(const PinnedFloats&) = delete;
  PinnedFloats& operator=(const PinnedFloats&) = delete;
  // At least n floats (never null). Growing drains `s` first: a copy queued on it may still read the old buffer.
  float* reserve(int64_t n, cudaStream_t s);

 private:
  float* p_ = nullptr;
  size_t n_ = 0;
};

// Host buffers of the MoE blocks' host synchronisations (gpu_moe.cpp), allocated on first need and reused every
// step. The expert-parallel exchange: per array exchanged together (the routed rows and their routing weights, or
// their gradients) `local`, this rank's side (the rows downloaded, then the rows to upload), and `exchanged`, the
// all-to-all's other side. The per-expert counts without expert parallelism: `counts`, pinned, so that their copy is
// asynchronous and the shared expert queued behind it runs while the host waits. `downloaded`: recorded after the
// downloads the host needs (an exchange's rows, the counts), so that it waits for them alone while the device runs
// the shared expert (created on first need, like the buffers).
struct MoeHostBuffers {
  static constexpr int kArrays = 2;
  PinnedFloats local[kArrays], exchanged[kArrays];
  PinnedFloats counts;  // E int64 counts in 2 E floats' room (cudaMallocHost's alignment suits int64)
  std::optional<Event> downloaded;
};

struct Ctx {
  const ModelConfig& cfg;
  float* P;              // device parameters (host().table() offsets)
  float* G;              // device gradients
  const uint16_t* P16;   // bf16 copies of P (null under fp32 products)
  const int64_t* Pint;   // device integer parameters (the hash tables)
  const int64_t* host_ints;  // host().int_params().data(): BlockOff::tid2eid points into it
  Blas& blas;
  DeviceArena& arena;
  cudaStream_t s;
  GemmType type;
  bool training;
  DeviceRope rope_a, rope_b;  // as detail::Ctx: ratio-0 layers; compressed layers, compressors, indexer
  bool balance_loss = true;   // false (the decoder): the MoE's sequence-balance loss is not computed
  bool indexer_grads = true;  // detail::Ctx's: false in a forward recomputed for its backward
  // Expert parallelism: the ep ranks (null or size 1: every expert here); the MoE blocks' host buffers (the
  // exchange's staging, the pinned counts, the event the host waits on)
  model::ProcessGroup* ep_group = nullptr;
  MoeHostBuffers* moe_host = nullptr;  // null (the decoder): the counts wait for the stream, nothing overlaps it
  float* p(int64_t off) const { return P + off; }
  float* g(int64_t off) const { return G + off; }
  const uint16_t* p16(int64_t off) const { return P16 ? P16 + off : nullptr; }
  const int64_t* tid2eid(const BlockOff& b) const { return b.tid2eid ? Pint + (b.tid2eid - host_ints) : nullptr; }
  bool bf16() const { return type == GemmType::bf16; }
};

// ---------------------------------------------------------------- products (gpu_linear.cpp)
// The operand a product reads: x itself under fp32 products; under bf16, x16 when the caller has the rounded copy,
// else x rounded into the arena now.
const void* operand(Ctx& c, const float* x, const uint16_t* x16, int64_t n);
// x rounded into the arena under bf16 products (several products read it), else null.
const uint16_t* bf16_copy(Ctx& c, const float* x, int64_t n);
// y[m, n] = x[m, k] W[n, k]^T (+ y when accumulate); W the parameter at offset w.
void linear(Ctx& c, const float* x, const uint16_t* x16, int64_t w, float* y, int64_t m, int64_t n, int64_t k,
            bool accumulate = false);
// Backward of linear: dx[m, k] (+)= dy W (dx null: none); dW += dy^T x (weight_grad false: none, a detached
// weight). dy16: dy already rounded (null: rounded here under bf16).
void linear_backward(Ctx& c, const float* x, const uint16_t* x16, int64_t w, const float* dy, const uint16_t* dy16,
                     float* dx, bool accumulate_dx, int64_t m, int64_t n, int64_t k, bool weight_grad = true);
// A raw product on device pointers, with the operands' rounding under bf16 (a16 / b16: copies already made).
void gemm(Ctx& c, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, const uint16_t* a16,
          int64_t lda, const float* b, const uint16_t* b16, int64_t ldb, float beta, float* out, int64_t ldc);

// ---------------------------------------------------------------- saved activations (model_impl.hpp's twins)
struct HcSaved {
  const float* X = nullptr;
  const uint16_t* X16 = nullptr;
  float *raw = nullptr, *rho = nullptr, *mix = nullptr;
  float *pre = nullptr, *post = nullptr, *A = nullptr, *M = nullptr;
};

struct CmpSaved {
  const float* x = nullptr;
  const uint16_t* x16 = nullptr;
  float *Cx = nullptr, *Zx = nullptr;
  float *S = nullptr, *pooled = nullptr, *rstd = nullptr, *out = nullptr;
  int64_t cdim = 0, m = 0;
  bool overlap = false;
};

struct AttnSaved {
  const float* xa = nullptr;
  const uint16_t* xa16 = nullptr;
  float *cq_raw, *cq_rstd, *cq, *q_raw, *q_rstd, *q, *kv_raw, *kv_rstd, *kv;
  CmpSaved cmp, icmp;
  float *qI = nullptr, *lam = nullptr;
  int32_t* sel = nullptr;          // [N, topk] indexer selections (absolute entries, -1 unused)
  const int32_t* ncomp = nullptr;  // [N]
  const int32_t* comp = nullptr;   // [N, cmax]
  int64_t cmax = 0, kmax = 0;
  float *P = nullptr, *o = nullptr, *od = nullptr, *u = nullptr;
  const uint16_t* od16 = nullptr;
};

struct MoeSaved {
  const float* x = nullptr;
  const uint16_t* x16 = nullptr;
  float *s = nullptr, *a = nullptr, *w = nullptr;
  int32_t* sel = nullptr;
  std::vector<int64_t> counts, offsets;  // host: the per-expert rows size the expert products
  int32_t *order_tok = nullptr, *order_slot = nullptr, *row_of = nullptr;
  int32_t* seq_counts = nullptr;  // [B, E] (bias layers: the balance loss's counts, kept for the backward)
  float *xg = nullptr, *wl = nullptr;
  // expert parallelism: the exchange's plan, and this rank's experts' input rows and weights (local expert
  // order); one process: xe = xg, we = wl, and the plan stays empty (the experts read `offsets`)
  model::detail::EpPlan ep;
  float *xe = nullptr, *we = nullptr;
  float *g = nullptr, *u = nullptr, *h = nullptr;
  float *sg = nullptr, *su = nullptr, *sh = nullptr;
};

struct BlockSaved {
  HcSaved hca, hcf;
  float *ya, *ya_rstd, *xa;
  AttnSaved at;
  float* attn_out;
  float* Xmid;
  float *yf, *yf_rstd, *xf;
  MoeSaved moe;
  float* ffn_out;
  float* Xout;
};

// ---------------------------------------------------------------- components
// mHC (gpu_mhc.cpp)
void hc_pre_forward(Ctx& c, const float* X, int64_t N, const HcOff& off, HcSaved& s, float* y);
void hc_pre_backward(Ctx& c, int64_t N, const HcOff& off, const HcSaved& s, const float* dy, const float* dpost,
                     const float* dM, float* dX);
void hc_post_forward(Ctx& c, const float* F, const float* X, const HcSaved& s, int64_t N, float* Xout);
void hc_post_backward(Ctx& c, const float* F, const float* X, const HcSaved& s, int64_t N, const float* dXout,
                      float* dF, float* dpost, float* dM, float* dX);
void hc_head_forward(Ctx& c, const float* X, int64_t N, const HcOff& off, HcSaved& s, float* h);
void hc_head_backward(Ctx& c, int64_t N, const HcOff& off, const HcSaved& s, const float* dh, float* dX);

// attention (gpu_attention.cpp): the indexer's KL loss contribution (coefficient included) is returned; in
// training its gradients go into the indexer's parameters during the forward, as on the CPU.
double attention_forward(Ctx& c, const DeviceSeq& seq, const BlockOff& b, const float* xa, AttnSaved& s, float* out);
void attention_backward(Ctx& c, const DeviceSeq& seq, const BlockOff& b, const AttnSaved& s, const float* dout,
                        float* dxa);

// MoE (gpu_moe.cpp): experts[j] the block's device expert weights of this rank's j-th expert (all of them in one
// process); returns the sequence-balance loss.
double moe_forward(Ctx& c, const DeviceSeq& seq, const BlockOff& b, const DeviceExpertWeights* experts,
                   const float* x, MoeSaved& s, float* out);
void moe_backward(Ctx& c, const DeviceSeq& seq, const BlockOff& b, const DeviceExpertWeights* experts,
                  const MoeSaved& s, const float* dout, float* dx);

// What the decoder (gpu_decode.cpp) reads of a cuda::Model: its layout, weights, products and stream.
struct ModelInternals {
  const ModelConfig& cfg;
  const std::vector<BlockOff>& blocks;  // main layers, then the MTP blocks
  const std::vector<std::vector<DeviceExpertWeights>>& experts;  // per block
  int64_t embed, head, norm;
  HcOff hc_head;
  float* P;
  const uint16_t* P16;  // null under fp32 products
  const int64_t* Pint;
  const int64_t* host_ints;
  Blas& blas;
  cudaStream_t stream;
  GemmType type;
};
ModelInternals internals(Model& m);

// Queued copies on the stream (pageable host sources are staged before the call returns: the host buffer may be
// reused at once).
void upload_async(void* dst, const void* src, size_t bytes, cudaStream_t s);
// dst = 0 (bytes), queued.
void zero_async(void* dst, size_t bytes, cudaStream_t s);
void copy_async(void* dst, const void* src, size_t bytes, cudaStream_t s);
// Host vector -> a copy in the step arena (geometry, lists): the copy is queued on the stream.
template <class T>
T* to_device(Ctx& c, const std::vector<T>& v) {
  T* d = static_cast<T*>(c.arena.raw(sizeof(T) * (v.empty() ? 1 : v.size())));
  if (!v.empty()) upload_async(d, v.data(), sizeof(T) * v.size(), c.s);
  return d;
}

}  // namespace trex::cuda::gm
