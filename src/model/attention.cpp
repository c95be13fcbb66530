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
#include "nn/gemm_bf16.hpp"
#include "nn/vec8.hpp"
#include "nn/vec_math.hpp"

namespace trex::model::detail {

namespace {

// ------------------------------------------------------------------ per-key vector helpers
// The attention inner loops work one key (a head_dim row) at a time, with nn::Vec8 so every dot has two vector
// accumulators summed in a fixed order: left to `omp simd`, GCC kept the compressed entries' dots scalar.
using nn::load8;
using nn::store8;
using nn::Vec8;

// a · b over n floats
inline float dot(const float* a, const float* b, int64_t n) {
  Vec8 s0 = {}, s1 = {};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    s0 += load8(a + j) * load8(b + j);
    s1 += load8(a + j + 8) * load8(b + j + 8);
  }
  if (j + 8 <= n) {
    s0 += load8(a + j) * load8(b + j);
    j += 8;
  }
  const Vec8 s = s0 + s1;
  float t = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
  for (; j < n; ++j) t += a[j] * b[j];
  return t;
}

// out[t] = dot(q, k[t], n) for four keys, n a multiple of 8, with the same bits as dot(): the same two accumulators
// per key and the same lane order ((0+4)+(1+5))+((2+6)+(3+7)), but q is loaded once for the four keys and the
// four lane reductions run together as shuffles (a horizontal sum each was most of a 64-float dot).
inline void dot4(const float* q, const float* const* k, int64_t n, float* out) {
  Vec8 s0[4] = {}, s1[4] = {};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const Vec8 q0 = load8(q + j), q1 = load8(q + j + 8);
    for (int t = 0; t < 4; ++t) {
      s0[t] += q0 * load8(k[t] + j);
      s1[t] += q1 * load8(k[t] + j + 8);
    }
  }
  if (j + 8 <= n) {
    const Vec8 q0 = load8(q + j);
    for (int t = 0; t < 4; ++t) s0[t] += q0 * load8(k[t] + j);
  }
  Vec8 v[4];
  for (int t = 0; t < 4; ++t) v[t] = s0[t] + s1[t];
  typedef int Idx8 __attribute__((vector_size(32)));
  const Idx8 lo = {0, 1, 2, 3, 8, 9, 10, 11}, hi = {4, 5, 6, 7, 12, 13, 14, 15};
  const Idx8 even = {0, 2, 4, 6, 8, 10, 12, 14}, odd = {1, 3, 5, 7, 9, 11, 13, 15};
  // lanes l + (l + 4) for two keys per vector, then pairs of those, then the two halves
  const Vec8 u01 = __builtin_shuffle(v[0], v[1], lo) + __builtin_shuffle(v[0], v[1], hi);
  const Vec8 u23 = __builtin_shuffle(v[2], v[3], lo) + __builtin_shuffle(v[2], v[3], hi);
  const Vec8 w = __builtin_shuffle(u01, u23, even) + __builtin_shuffle(u01, u23, odd);
  const Vec8 r = __builtin_shuffle(w, w, even) + __builtin_shuffle(w, w, odd);
  for (int t = 0; t < 4; ++t) out[t] = r[t];
}

// out[e] = scale * dot(q, key(e), n) for e in [0, count): blocks of four keys through dot4 (the same bits).
template <class Key>
inline void dots(const float* q, Key key, int64_t count, int64_t n, float scale, float* out) {
  int64_t e = 0;
  if (n % 8 == 0)
    for (; e + 4 <= count; e += 4) {
      const float* k[4] = {key(e), key(e + 1), key(e + 2), key(e + 3)};
      dot4(q, k, n, out + e);
      for (int t = 0; t < 4; ++t) out[e + t] *= scale;
    }
  for (; e < count; ++e) out[e] = dot(q, key(e), n) * scale;
}

// y += a x + b z over n floats
inline void axpy2(float a, const float* x, float b, const float* z, float* y, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) store8(y + j, load8(y + j) + a * load8(x + j) + b * load8(z + j));
  for (; j < n; ++j) y[j] += a * x[j] + b * z[j];
}
inline void axpy(float a, const float* x, float* y, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) store8(y + j, load8(y + j) + a * load8(x + j));
  for (; j < n; ++j) y[j] += a * x[j];
}

// ------------------------------------------------------------------ token-level compressor (§4)
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
  const float* ape = c.p(off.ape);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    const float* a = ape + (seq.pos[size_t(i)] % m) * W;  // ape goes into the gate logits only
    float* z = s.Zx + i * W;
    for (int64_t j = 0; j < W; ++j) z[j] += a[j];
  }
  s.S = c.arena.zeros(std::max<int64_t>(1, NE * slots * cdim));
  s.pooled = c.arena.floats(std::max<int64_t>(1, NE * cdim));
  s.rstd = c.arena.floats(std::max<int64_t>(1, NE));
  s.out = c.arena.floats(std::max<int64_t>(1, NE * cdim));
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < NE; ++e) {
    const int64_t s0 = en.start[size_t(e)];
    const bool has_prev = overlap && en.idx[size_t(e)] > 0;
    float* S = s.S + e * slots * cdim;
    for (int64_t ch = 0; ch < cdim; ++ch) {
      float mx = -std::numeric_limits<float>::infinity();
      auto z_at = [&](int64_t slot) -> float {
        if (overlap) {
          if (slot < m) return s.Zx[(s0 - m + slot) * W + ch];
          return s.Zx[(s0 + slot - m) * W + cdim + ch];
        }
        return s.Zx[(s0 + slot) * W + ch];
      };
      auto c_at = [&](int64_t slot) -> float {
        if (overlap) {
          if (slot < m) return s.Cx[(s0 - m + slot) * W + ch];
          return s.Cx[(s0 + slot - m) * W + cdim + ch];
        }
        return s.Cx[(s0 + slot) * W + ch];
      };
      const int64_t first = (overlap && !has_prev) ? m : 0;  // block 0: previous slots are empty (-inf)
      for (int64_t k = first; k < slots; ++k) mx = std::max(mx, z_at(k));
      float sum = 0;
      for (int64_t k = first; k < slots; ++k) sum += (S[k * cdim + ch] = std::exp(z_at(k) - mx));
      float pooled = 0;
      for (int64_t k = first; k < slots; ++k) {
        S[k * cdim + ch] /= sum;
        pooled += S[k * cdim + ch] * c_at(k);
      }
      s.pooled[e * cdim + ch] = pooled;
    }
  }
  if (NE > 0) {
    nn::rmsnorm_forward(s.pooled, c.p(off.norm), s.out, s.rstd, NE, cdim, float(c.cfg.rms_norm_eps));
    nn::rope_apply(s.out, NE, 1, cdim, en.epos.data(), rope, false);
  }
}

// dout [NE, cdim] is consumed (modified). dx may be null (detached input: parameter gradients only).
void compressor_backward(Ctx& c, const Seq& seq, const Entries& en, const CmpOff& off, const nn::RopeTable& rope,
                         const CmpSaved& s, float* dout, float* dx) {
  const int64_t N = seq.N, d = c.cfg.hidden_size, m = s.m, cdim = s.cdim, W = (s.overlap ? 2 : 1) * cdim;
  const int64_t slots = s.overlap ? 2 * m : m, NE = en.NE;
  if (NE == 0) return;
  nn::rope_apply(dout, NE, 1, cdim, en.epos.data(), rope, true);
  float* dpooled = c.arena.floats(NE * cdim);
  nn::rmsnorm_backward(s.pooled, c.p(off.norm), s.rstd, dout, dpooled, c.g(off.norm), NE, cdim, false);
  float* dCx = c.arena.zeros(N * W);
  float* dZx = c.arena.zeros(N * W);
  const bool overlap = s.overlap;
  // Each (token, channel) feeds at most one entry (CSA: channels [0,c) -> next entry, [c,2c) -> own), so the
  // entries can be processed in parallel without races.
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < NE; ++e) {
    const int64_t s0 = en.start[size_t(e)];
    const bool has_prev = overlap && en.idx[size_t(e)] > 0;
    const float* S = s.S + e * slots * cdim;
    const int64_t first = (overlap && !has_prev) ? m : 0;
    for (int64_t ch = 0; ch < cdim; ++ch) {
      const float g = dpooled[e * cdim + ch], pooled = s.pooled[e * cdim + ch];
      for (int64_t k = first; k < slots; ++k) {
        int64_t idx;
        if (overlap)
          idx = k < m ? (s0 - m + k) * W + ch : (s0 + k - m) * W + cdim + ch;
        else
          idx = (s0 + k) * W + ch;
        const float sk = S[k * cdim + ch];
        dCx[idx] = sk * g;
        dZx[idx] = sk * g * (s.Cx[idx] - pooled);
      }
    }
  }
  float* gape = c.g(off.ape);
  for (int64_t i = 0; i < N; ++i) {
    float* ga = gape + (seq.pos[size_t(i)] % m) * W;
    const float* z = dZx + i * W;
    for (int64_t j = 0; j < W; ++j) ga[j] += z[j];
  }
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
  const float* K = s.icmp.out;
#pragma omp parallel for schedule(dynamic, 8)
  for (int64_t i = 0; i < N; ++i) {
    const int64_t nv = en.nvis[size_t(i)], base = en.base[size_t(i)];
    float* I = scores + i * smax;
    for (int64_t e = 0; e < nv; ++e) {
      float acc = 0;
      for (int64_t h = 0; h < HI; ++h) {
        const float* q = s.qI + (i * HI + h) * cI;
        const float* k = K + (base + e) * cI;
        acc += s.lam[i * HI + h] * std::max(dot(q, k, cI), 0.0f);  // ReLU first, then head weighting
      }
      I[e] = acc;
    }
    int32_t* sel = s.sel + i * topk;
    const int64_t kt = std::min(topk, nv);
    nn::topk_lower_index(I, nv, kt, sel);
    for (int64_t j = 0; j < kt; ++j) sel[j] += int32_t(base);
    for (int64_t j = kt; j < topk; ++j) sel[j] = -1;
  }
  // The entries the KL loss (and the main attention) use: the top-k, or every visible entry in the dense
  // warm-up.
  const bool dense = cfg.indexer_dense_warmup;
  const int64_t kstride = dense ? smax : topk;
  const int32_t* kl_sel = s.sel;
  if (dense) {
    int32_t* all = c.arena.ints(N * smax);
    for (int64_t i = 0; i < N; ++i)
      for (int64_t e = 0; e < smax; ++e) all[i * smax + e] = e < en.nvis[size_t(i)] ? int32_t(en.base[size_t(i)] + e) : -1;
    kl_sel = all;
  }

  // KL(p || softmax(I at top-k)); p from the detached main q and compressed entries (no window, no sink).
  const double coeff = cfg.indexer_loss_coeff / double(seq.B * seq.T);
  const float eps = 1e-10f, inv_sqrt_c = float(1.0 / std::sqrt(double(hd)));
  float* dqI = c.arena.zeros(N * HI * cI);
  float* dlam = c.arena.zeros(N * HI);
  float* dK_all = c.arena.zeros(int64_t(c.nthreads) * std::max<int64_t>(1, NE * cI));
  // Same bits for the same thread count (exact resume): per-thread partials (loss, dK) over a static
  // round-robin split of the rows, summed in thread order.
  std::vector<double> loss_part(static_cast<size_t>(c.nthreads), 0.0);
  const float* Ce = s.cmp.out;
#pragma omp parallel
  {
    double& loss = loss_part[size_t(omp_get_thread_num())];
    float* dK = dK_all + int64_t(omp_get_thread_num()) * std::max<int64_t>(1, NE * cI);
    std::vector<float> Pt(static_cast<size_t>(smax)), lg(static_cast<size_t>(smax));
    std::vector<float> pv(static_cast<size_t>(kstride)), piv(static_cast<size_t>(kstride)),
        gpiv(static_cast<size_t>(kstride));
    float* p = pv.data();
    float* pi = piv.data();
    float* gpi = gpiv.data();
#pragma omp for schedule(static, 8)
    for (int64_t i = 0; i < N; ++i) {
      const int64_t nv = en.nvis[size_t(i)], base = en.base[size_t(i)];
      if (nv == 0) continue;
      const int64_t kt = dense ? nv : std::min(topk, nv);
      std::fill(Pt.begin(), Pt.begin() + nv, 0.0f);
      for (int64_t h = 0; h < H; ++h) {
        const float* q = s.q + (i * H + h) * hd;
        float mx = -std::numeric_limits<float>::infinity();
        for (int64_t e = 0; e < nv; ++e) {
          const float* k = Ce + (base + e) * hd;
          lg[size_t(e)] = dot(q, k, hd) * inv_sqrt_c;
          mx = std::max(mx, lg[size_t(e)]);
        }
        float sum = 0;
        for (int64_t e = 0; e < nv; ++e) sum += (lg[size_t(e)] = std::exp(lg[size_t(e)] - mx));
        for (int64_t e = 0; e < nv; ++e) Pt[size_t(e)] += lg[size_t(e)] / sum;
      }
      const int32_t* sel = kl_sel + i * kstride;
      const float* I = scores + i * smax;
      float psum = 0, mx = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < kt; ++j) {
        psum += Pt[size_t(sel[j] - base)];
        mx = std::max(mx, I[sel[j] - base]);
      }
      float zsum = 0;
      for (int64_t j = 0; j < kt; ++j) zsum += std::exp(I[sel[j] - base] - mx);
      double kl = 0;
      float dot_pg = 0;
      for (int64_t j = 0; j < kt; ++j) {
        p[j] = Pt[size_t(sel[j] - base)] / psum;
        pi[j] = std::exp(I[sel[j] - base] - mx) / zsum;
        kl += double(p[j] + eps) * (std::log(double(p[j] + eps)) - std::log(double(pi[j] + eps)));
        gpi[j] = -float(coeff) * (p[j] + eps) / (pi[j] + eps);
        dot_pg += pi[j] * gpi[j];
      }
      loss += kl;
      for (int64_t j = 0; j < kt; ++j) {
        const float dI = pi[j] * (gpi[j] - dot_pg);
        const int64_t e = sel[j];
        const float* k = K + e * cI;
        float* dk = dK + e * cI;
        for (int64_t h = 0; h < HI; ++h) {
          const float* q = s.qI + (i * HI + h) * cI;
          const float qk = dot(q, k, cI);
          if (qk <= 0) continue;
          dlam[i * HI + h] += dI * qk;
          const float dd = dI * s.lam[i * HI + h];
          float* dq = dqI + (i * HI + h) * cI;
          for (int64_t t = 0; t < cI; ++t) {
            dq[t] += dd * k[t];
            dk[t] += dd * q[t];
          }
        }
      }
    }
  }
  double loss = 0;
  for (double v : loss_part) loss += v;
  if (!c.training) return loss * coeff;  // inference: the loss value only
  float* dK = dK_all;
  for (int th = 1; th < c.nthreads; ++th) {
    const float* o = dK_all + int64_t(th) * std::max<int64_t>(1, NE * cI);
    for (int64_t j = 0; j < NE * cI; ++j) dK[j] += o[j];
  }
  for (int64_t i = 0; i < N * HI; ++i) dlam[i] *= lam_scale;
  nn::linear_backward(xa, c.p(b.iwp), dlam, nullptr, c.g(b.iwp), N, HI, d, false, nullptr, s.xa16);
  nn::rope_apply(dqI, N, HI, cI, seq.pos.data(), c.rope_b, true);
  nn::linear_backward(s.cq, c.p(b.iwq_b), dqI, nullptr, c.g(b.iwq_b), N, HI * cI, qr);
  compressor_backward(c, seq, en, b.icmp, c.rope_b, s.icmp, dK, nullptr);
  return loss * coeff;
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
  const float scale = float(1.0 / std::sqrt(double(hd)));
  const float* sink = c.p(b.sink);
  const float* Ce = b.ratio != 0 ? s.cmp.out : nullptr;
#pragma omp parallel for schedule(dynamic, 8)
  for (int64_t i = 0; i < N; ++i) {
    int32_t* comp = s.comp + i * s.cmax;
    int32_t nc = 0;
    if (b.kind == AttnKind::HCA || (b.kind == AttnKind::CSA && cfg.indexer_dense_warmup)) {
      for (int32_t e = 0; e < en->nvis[size_t(i)]; ++e) comp[nc++] = en->base[size_t(i)] + e;
    } else if (b.kind == AttnKind::CSA) {
      for (int64_t j = 0; j < cfg.index_topk; ++j)
        if (s.sel[i * cfg.index_topk + j] >= 0) comp[nc++] = s.sel[i * cfg.index_topk + j];
    }
    s.ncomp[i] = nc;
    const int64_t ws = std::max<int64_t>(seq.doc_start[size_t(i)], i - w + 1), nw = i - ws + 1;
    auto key = [&](int64_t e) { return e < nw ? s.kv + (ws + e) * hd : Ce + int64_t(comp[e - nw]) * hd; };
    for (int64_t h = 0; h < H; ++h) {
      const float* q = s.q + (i * H + h) * hd;
      float* P = s.P + (i * H + h) * s.kmax;
      dots(q, key, nw + nc, hd, scale, P);
      float mx = sink[h];
      for (int64_t e = 0; e < nw + nc; ++e) mx = std::max(mx, P[e]);
      float sum = std::exp(sink[h] - mx);  // the sink joins the denominator only
#pragma omp simd reduction(+ : sum)
      for (int64_t e = 0; e < nw + nc; ++e) sum += (P[e] = nn::fast_expf(P[e] - mx));
      float* o = s.o + (i * H + h) * hd;
      for (int64_t j = 0; j < hd; ++j) o[j] = 0;
      for (int64_t e = 0; e < nw + nc; ++e) {
        P[e] /= sum;
        const float* k = e < nw ? s.kv + (ws + e) * hd : Ce + int64_t(comp[e - nw]) * hd;
        axpy(P[e], k, o, hd);
      }
    }
  }
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
  const int64_t qr = cfg.q_lora_rank, G = cfg.o_groups, ro = cfg.o_lora_rank, w = cfg.sliding_window;
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
  const int64_t NE = en ? en->NE : 0;
  const int64_t per = N * hd + NE * hd + H;
  float* tl = c.arena.zeros(int64_t(c.nthreads) * per);
  float* dq = c.arena.floats(N * H * hd);
  const float scale = float(1.0 / std::sqrt(double(hd)));
  const float* Ce = b.ratio != 0 ? s.cmp.out : nullptr;
#pragma omp parallel
  {
    float* dkv = tl + int64_t(omp_get_thread_num()) * per;
    float* dC = dkv + N * hd;
    float* dsink = dC + NE * hd;
    thread_local std::vector<float> gk_all;  // g · key for the query's keys (grown once)
    if (gk_all.size() < size_t(s.kmax)) gk_all.resize(size_t(s.kmax));
    float* gk_of = gk_all.data();
#pragma omp for schedule(static, 8)  // static: per-thread partials, same bits every run
    for (int64_t i = 0; i < N; ++i) {
      const int32_t* comp = s.comp + i * s.cmax;
      const int64_t nc = s.ncomp[i];
      const int64_t ws = std::max<int64_t>(seq.doc_start[size_t(i)], i - w + 1), nw = i - ws + 1;
      auto key = [&](int64_t e) { return e < nw ? s.kv + (ws + e) * hd : Ce + int64_t(comp[e - nw]) * hd; };
      for (int64_t h = 0; h < H; ++h) {
        const float* q = s.q + (i * H + h) * hd;
        const float* o = s.o + (i * H + h) * hd;
        const float* g = dod + (i * H + h) * hd;
        const float* P = s.P + (i * H + h) * s.kmax;
        float* dqh = dq + (i * H + h) * hd;
        float psum = 0;
        const float go = dot(g, o, hd);
        for (int64_t j = 0; j < hd; ++j) dqh[j] = 0;
        dots(g, key, nw + nc, hd, 1.0f, gk_of);
        for (int64_t e = 0; e < nw + nc; ++e) {
          const float* k = key(e);
          float* dk = e < nw ? dkv + (ws + e) * hd : dC + int64_t(comp[e - nw]) * hd;
          const float gk = gk_of[e];
          const float p = P[e];
          psum += p;
          const float dl = p * (gk - go) * scale;
          axpy(dl, k, dqh, hd);
          axpy2(dl, q, p, g, dk, hd);  // key role + value role (K == V)
        }
        dsink[h] += -(1.0f - psum) * go;
      }
    }
  }
  float* dkv = tl;
  for (int th = 1; th < c.nthreads; ++th) {
    const float* o = tl + int64_t(th) * per;
    for (int64_t j = 0; j < per; ++j) dkv[j] += o[j];
  }
  float* dC = dkv + N * hd;
  float* dsink = dC + NE * hd;
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
