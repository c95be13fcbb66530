// The joint-softmax attention core (nn/sparse_attention.hpp): the fast path model/attention.cpp runs, and the
// readable reference.
#include "nn/sparse_attention.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/attention_vec.hpp"
#include "nn/vec_math.hpp"

namespace trex::nn {

using attn_vec::axpy;
using attn_vec::axpy2;
using attn_vec::dot;
using attn_vec::dots;

// ------------------------------------------------------------------ fast path
void sparse_attention_forward(const SparseAttention& a, float* P_all, float* o_all) {
  const int64_t N = a.N, H = a.H, hd = a.hd, kmax = a.kmax();
  const float scale = a.scale;
  const float* sink = a.sink;
  const float* kv = a.kv;
  const float* Ce = a.C;
#pragma omp parallel for schedule(dynamic, 8)
  for (int64_t i = 0; i < N; ++i) {
    const int32_t* comp = a.comp + i * a.cmax;
    const int64_t nc = a.ncomp[i];
    const int64_t ws = a.ws[i], nw = i - ws + 1;
    auto key = [&](int64_t e) { return e < nw ? kv + (ws + e) * hd : Ce + int64_t(comp[e - nw]) * hd; };
    for (int64_t h = 0; h < H; ++h) {
      const float* q = a.q + (i * H + h) * hd;
      float* P = P_all + (i * H + h) * kmax;
      dots(q, key, nw + nc, hd, scale, P);
      float mx = sink[h];
      for (int64_t e = 0; e < nw + nc; ++e) mx = std::max(mx, P[e]);
      float sum = std::exp(sink[h] - mx);  // the sink joins the denominator only
#pragma omp simd reduction(+ : sum)
      for (int64_t e = 0; e < nw + nc; ++e) sum += (P[e] = nn::fast_expf(P[e] - mx));
      float* o = o_all + (i * H + h) * hd;
      for (int64_t j = 0; j < hd; ++j) o[j] = 0;
      for (int64_t e = 0; e < nw + nc; ++e) {
        P[e] /= sum;
        const float* k = e < nw ? kv + (ws + e) * hd : Ce + int64_t(comp[e - nw]) * hd;
        axpy(P[e], k, o, hd);
      }
    }
  }
}

SparseAttentionGrads sparse_attention_backward(const SparseAttention& a, const float* P_all, const float* o_all,
                                               const float* dod, float* dq, Arena& arena, int nthreads) {
  const int64_t N = a.N, H = a.H, hd = a.hd, NE = a.NE, kmax = a.kmax();
  const int64_t per = N * hd + NE * hd + H;
  float* tl = arena.zeros(int64_t(nthreads) * per);
  const float scale = a.scale;
  const float* kv = a.kv;
  const float* Ce = a.C;
#pragma omp parallel num_threads(nthreads)
  {
    float* dkv = tl + int64_t(omp_get_thread_num()) * per;
    float* dC = dkv + N * hd;
    float* dsink = dC + NE * hd;
    thread_local std::vector<float> gk_all;  // g · key for the query's keys (grown once)
    if (gk_all.size() < size_t(kmax)) gk_all.resize(size_t(kmax));
    float* gk_of = gk_all.data();
#pragma omp for schedule(static, 8)  // static: per-thread partials, same bits every run
    for (int64_t i = 0; i < N; ++i) {
      const int32_t* comp = a.comp + i * a.cmax;
      const int64_t nc = a.ncomp[i];
      const int64_t ws = a.ws[i], nw = i - ws + 1;
      auto key = [&](int64_t e) { return e < nw ? kv + (ws + e) * hd : Ce + int64_t(comp[e - nw]) * hd; };
      for (int64_t h = 0; h < H; ++h) {
        const float* q = a.q + (i * H + h) * hd;
        const float* o = o_all + (i * H + h) * hd;
        const float* g = dod + (i * H + h) * hd;
        const float* P = P_all + (i * H + h) * kmax;
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
  for (int th = 1; th < nthreads; ++th) {
    const float* o = tl + int64_t(th) * per;
    for (int64_t j = 0; j < per; ++j) dkv[j] += o[j];
  }
  return SparseAttentionGrads{dkv, dkv + N * hd, dkv + N * hd + NE * hd};
}

// ------------------------------------------------------------------ reference
namespace {
// key e of query i (window keys first, then the compressed entries)
const float* key_row(const SparseAttention& a, int64_t i, int64_t e) {
  const int64_t nw = i - a.ws[i] + 1;
  return e < nw ? a.kv + (a.ws[i] + e) * a.hd : a.C + int64_t(a.comp[i * a.cmax + e - nw]) * a.hd;
}
int64_t key_count(const SparseAttention& a, int64_t i) { return i - a.ws[i] + 1 + a.ncomp[i]; }
}  // namespace

void sparse_attention_forward_ref(const SparseAttention& a, float* P, float* o) {
  const int64_t H = a.H, hd = a.hd, kmax = a.kmax();
  std::vector<double> l(static_cast<size_t>(kmax)), acc(static_cast<size_t>(hd));
  for (int64_t i = 0; i < a.N; ++i) {
    const int64_t nk = key_count(a, i);
    for (int64_t h = 0; h < H; ++h) {
      const float* q = a.q + (i * H + h) * hd;
      double mx = a.sink[h];
      for (int64_t e = 0; e < nk; ++e) {
        const float* k = key_row(a, i, e);
        double s = 0;
        for (int64_t j = 0; j < hd; ++j) s += double(q[j]) * double(k[j]);
        l[size_t(e)] = double(a.scale) * s;
        mx = std::max(mx, l[size_t(e)]);
      }
      double sum = std::exp(double(a.sink[h]) - mx);
      for (int64_t e = 0; e < nk; ++e) sum += std::exp(l[size_t(e)] - mx);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t e = 0; e < nk; ++e) {
        const double p = std::exp(l[size_t(e)] - mx) / sum;
        P[(i * H + h) * kmax + e] = float(p);
        const float* k = key_row(a, i, e);
        for (int64_t j = 0; j < hd; ++j) acc[size_t(j)] += p * double(k[j]);
      }
      for (int64_t j = 0; j < hd; ++j) o[(i * H + h) * hd + j] = float(acc[size_t(j)]);
    }
  }
}

void sparse_attention_backward_ref(const SparseAttention& a, const float* P, const float* o, const float* g, float* dq,
                                   float* dkv, float* dC, float* dsink) {
  const int64_t N = a.N, H = a.H, hd = a.hd, kmax = a.kmax();
  std::vector<double> gkv(static_cast<size_t>(N * hd), 0.0), gC(static_cast<size_t>(a.NE * hd), 0.0),
      gs(static_cast<size_t>(H), 0.0), gq(static_cast<size_t>(hd));
  for (int64_t i = 0; i < N; ++i) {
    const int64_t nw = i - a.ws[i] + 1, nk = key_count(a, i);
    for (int64_t h = 0; h < H; ++h) {
      const float* qh = a.q + (i * H + h) * hd;
      const float* oh = o + (i * H + h) * hd;
      const float* gh = g + (i * H + h) * hd;
      const float* Ph = P + (i * H + h) * kmax;
      double go = 0, psum = 0;
      for (int64_t j = 0; j < hd; ++j) go += double(gh[j]) * double(oh[j]);
      std::fill(gq.begin(), gq.end(), 0.0);
      for (int64_t e = 0; e < nk; ++e) {
        const float* k = key_row(a, i, e);
        double gk = 0;
        for (int64_t j = 0; j < hd; ++j) gk += double(gh[j]) * double(k[j]);
        const double p = Ph[e], dl = p * (gk - go) * double(a.scale);
        psum += p;
        double* dk = e < nw ? &gkv[size_t((a.ws[i] + e) * hd)] : &gC[size_t(int64_t(a.comp[i * a.cmax + e - nw]) * hd)];
        for (int64_t j = 0; j < hd; ++j) {
          gq[size_t(j)] += dl * double(k[j]);
          dk[j] += dl * double(qh[j]) + p * double(gh[j]);  // key role + value role (K == V)
        }
      }
      for (int64_t j = 0; j < hd; ++j) dq[(i * H + h) * hd + j] = float(gq[size_t(j)]);
      gs[size_t(h)] += -(1.0 - psum) * go;  // the sink's probability is 1 - Σ P
    }
  }
  for (size_t j = 0; j < gkv.size(); ++j) dkv[j] = float(gkv[j]);
  for (size_t j = 0; j < gC.size(); ++j) dC[j] = float(gC[j]);
  for (int64_t h = 0; h < H; ++h) dsink[h] = float(gs[size_t(h)]);
}

}  // namespace trex::nn
