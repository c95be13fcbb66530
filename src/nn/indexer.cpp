// The lightning indexer's scores and KL loss (nn/indexer.hpp): the fast path model/attention.cpp runs (its loops
// moved verbatim), and the readable double reference.
#include "nn/indexer.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "nn/attention_vec.hpp"
#include "nn/ops.hpp"

namespace trex::nn {

using attn_vec::dot;

// ------------------------------------------------------------------ fast path
void indexer_scores(const Indexer& ix, float* scores) {
  const int64_t N = ix.N, HI = ix.HI, cI = ix.cI, smax = ix.smax;
  const float* K = ix.K;
#pragma omp parallel for schedule(dynamic, 8)
  for (int64_t i = 0; i < N; ++i) {
    const int64_t nv = ix.nvis[size_t(i)], base = ix.base[size_t(i)];
    float* I = scores + i * smax;
    for (int64_t e = 0; e < nv; ++e) {
      float acc = 0;
      for (int64_t h = 0; h < HI; ++h) {
        const float* q = ix.qI + (i * HI + h) * cI;
        const float* k = K + (base + e) * cI;
        acc += ix.lam[i * HI + h] * std::max(dot(q, k, cI), 0.0f);  // ReLU first, then head weighting
      }
      I[e] = acc;
    }
  }
}

void indexer_select(const Indexer& ix, const float* scores, int64_t topk, int32_t* sel_all) {
#pragma omp parallel for schedule(dynamic, 8)
  for (int64_t i = 0; i < ix.N; ++i) {
    const int64_t nv = ix.nvis[size_t(i)], base = ix.base[size_t(i)];
    const float* I = scores + i * ix.smax;
    int32_t* sel = sel_all + i * topk;
    const int64_t kt = std::min(topk, nv);
    topk_lower_index(I, nv, kt, sel);
    for (int64_t j = 0; j < kt; ++j) sel[j] += int32_t(base);
    for (int64_t j = kt; j < topk; ++j) sel[j] = -1;
  }
}

void indexer_dense_sel(const Indexer& ix, int32_t* all) {
  const int64_t smax = ix.smax;
  for (int64_t i = 0; i < ix.N; ++i)
    for (int64_t e = 0; e < smax; ++e) all[i * smax + e] = e < ix.nvis[size_t(i)] ? int32_t(ix.base[size_t(i)] + e) : -1;
}

// KL(p || softmax(I at the selection)); p from the detached main q and compressed entries (no window, no sink).
double indexer_kl(const Indexer& ix, const IndexerKL& a, const float* scores, float* dqI, float* dlam, float** dK_out,
                  Arena& arena, int nthreads, bool with_grads) {
  const int64_t N = ix.N, HI = ix.HI, cI = ix.cI, NE = ix.NE, smax = ix.smax;
  const int64_t H = a.H, hd = a.hd, kstride = a.kstride;
  const double coeff = a.coeff;
  const float eps = 1e-10f, inv_sqrt_c = float(1.0 / std::sqrt(double(hd)));
  std::fill(dqI, dqI + N * HI * cI, 0.0f);
  std::fill(dlam, dlam + N * HI, 0.0f);
  float* dK_all = arena.zeros(int64_t(nthreads) * std::max<int64_t>(1, NE * cI));
  const float* K = ix.K;
  // Same bits for the same thread count (exact resume): per-thread partials (loss, dK) over a static
  // round-robin split of the rows, summed in thread order.
  std::vector<double> loss_part(static_cast<size_t>(nthreads), 0.0);
  const float* Ce = a.Ce;
#pragma omp parallel num_threads(nthreads)
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
      const int64_t nv = ix.nvis[size_t(i)], base = ix.base[size_t(i)];
      if (nv == 0) continue;
      const int64_t kt = std::min(kstride, nv);  // the dense lists (kstride = smax >= nv) use every visible entry
      std::fill(Pt.begin(), Pt.begin() + nv, 0.0f);
      for (int64_t h = 0; h < H; ++h) {
        const float* q = a.q + (i * H + h) * hd;
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
      const int32_t* sel = a.sel + i * kstride;
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
          const float* q = ix.qI + (i * HI + h) * cI;
          const float qk = dot(q, k, cI);
          if (qk <= 0) continue;
          dlam[i * HI + h] += dI * qk;
          const float dd = dI * ix.lam[i * HI + h];
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
  if (!with_grads) {
    *dK_out = nullptr;
    return loss * coeff;
  }
  float* dK = dK_all;
  for (int th = 1; th < nthreads; ++th) {
    const float* o = dK_all + int64_t(th) * std::max<int64_t>(1, NE * cI);
    for (int64_t j = 0; j < NE * cI; ++j) dK[j] += o[j];
  }
  *dK_out = dK;
  return loss * coeff;
}

// ------------------------------------------------------------------ reference
namespace {
double dot_d(const float* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t t = 0; t < n; ++t) s += double(a[t]) * double(b[t]);
  return s;
}
}  // namespace

void indexer_scores_ref(const Indexer& ix, float* scores) {
  for (int64_t i = 0; i < ix.N; ++i) {
    const int64_t nv = ix.nvis[i], base = ix.base[i];
    for (int64_t e = 0; e < nv; ++e) {
      double acc = 0;
      for (int64_t h = 0; h < ix.HI; ++h)
        acc += double(ix.lam[i * ix.HI + h]) *
               std::max(dot_d(ix.qI + (i * ix.HI + h) * ix.cI, ix.K + (base + e) * ix.cI, ix.cI), 0.0);
      scores[i * ix.smax + e] = float(acc);
    }
  }
}

double indexer_kl_ref(const Indexer& ix, const IndexerKL& a, float* dqI, float* dlam, float* dK) {
  const int64_t N = ix.N, HI = ix.HI, cI = ix.cI, NE = ix.NE, H = a.H, hd = a.hd;
  const double eps = double(1e-10f), scale = 1.0 / std::sqrt(double(hd)), coeff = a.coeff;
  std::vector<double> dK_d(static_cast<size_t>(NE * cI), 0.0);
  double loss = 0;
  for (int64_t i = 0; i < N; ++i) {
    const int64_t nv = ix.nvis[i], base = ix.base[i];
    const int64_t kt = std::min(a.kstride, nv);
    std::vector<double> dq_d(static_cast<size_t>(HI * cI), 0.0), dl_d(static_cast<size_t>(HI), 0.0);
    if (kt > 0) {
      // the main distribution over all nv visible entries, summed over heads
      std::vector<double> Pt(static_cast<size_t>(nv), 0.0), lg(static_cast<size_t>(nv));
      for (int64_t h = 0; h < H; ++h) {
        double mx = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t e = 0; e < nv; ++e) {
          lg[size_t(e)] = dot_d(a.q + (i * H + h) * hd, a.Ce + (base + e) * hd, hd) * scale;
          mx = std::max(mx, lg[size_t(e)]);
        }
        for (int64_t e = 0; e < nv; ++e) sum += (lg[size_t(e)] = std::exp(lg[size_t(e)] - mx));
        for (int64_t e = 0; e < nv; ++e) Pt[size_t(e)] += lg[size_t(e)] / sum;
      }
      // the selected entries: their qk, scores, p and pi
      const int32_t* sel = a.sel + i * a.kstride;
      std::vector<double> qk(static_cast<size_t>(kt * HI)), I(static_cast<size_t>(kt)), p(static_cast<size_t>(kt)),
          pi(static_cast<size_t>(kt));
      double psum = 0, mx = -std::numeric_limits<double>::infinity(), zsum = 0;
      for (int64_t j = 0; j < kt; ++j) {
        double acc = 0;
        for (int64_t h = 0; h < HI; ++h) {
          qk[size_t(j * HI + h)] = dot_d(ix.qI + (i * HI + h) * cI, ix.K + int64_t(sel[j]) * cI, cI);
          acc += double(ix.lam[i * HI + h]) * std::max(qk[size_t(j * HI + h)], 0.0);
        }
        I[size_t(j)] = acc;
        psum += Pt[size_t(sel[j] - base)];
        mx = std::max(mx, acc);
      }
      for (int64_t j = 0; j < kt; ++j) zsum += std::exp(I[size_t(j)] - mx);
      double dot_pg = 0;
      std::vector<double> gpi(static_cast<size_t>(kt));
      for (int64_t j = 0; j < kt; ++j) {
        p[size_t(j)] = Pt[size_t(sel[j] - base)] / psum;
        pi[size_t(j)] = std::exp(I[size_t(j)] - mx) / zsum;
        loss += coeff * (p[size_t(j)] + eps) * (std::log(p[size_t(j)] + eps) - std::log(pi[size_t(j)] + eps));
        gpi[size_t(j)] = -coeff * (p[size_t(j)] + eps) / (pi[size_t(j)] + eps);
        dot_pg += pi[size_t(j)] * gpi[size_t(j)];
      }
      for (int64_t j = 0; j < kt; ++j) {
        const double dI = pi[size_t(j)] * (gpi[size_t(j)] - dot_pg);
        const float* k = ix.K + int64_t(sel[j]) * cI;
        for (int64_t h = 0; h < HI; ++h) {
          if (qk[size_t(j * HI + h)] <= 0) continue;  // the ReLU's gradient
          dl_d[size_t(h)] += dI * qk[size_t(j * HI + h)];
          const double dd = dI * double(ix.lam[i * HI + h]);
          const float* q = ix.qI + (i * HI + h) * cI;
          for (int64_t t = 0; t < cI; ++t) {
            dq_d[size_t(h * cI + t)] += dd * double(k[t]);
            dK_d[size_t(int64_t(sel[j]) * cI + t)] += dd * double(q[t]);
          }
        }
      }
    }
    if (dqI)
      for (int64_t t = 0; t < HI * cI; ++t) dqI[i * HI * cI + t] = float(dq_d[size_t(t)]);
    if (dlam)
      for (int64_t h = 0; h < HI; ++h) dlam[i * HI + h] = float(dl_d[size_t(h)]);
  }
  if (dK)
    for (int64_t t = 0; t < NE * cI; ++t) dK[t] = float(dK_d[size_t(t)]);
  return loss;
}

}  // namespace trex::nn
