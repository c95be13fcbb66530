// The compressor's pooling (nn/compressor_pool.hpp): the fast path model/attention.cpp runs (its loops, moved here
// unchanged), and the readable double-precision reference.
#include "nn/compressor_pool.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace trex::nn {

// ------------------------------------------------------------------ fast path
void compressor_ape_add(const CompressorPool& p, const float* ape, float* Zx) {
  const int64_t N = p.N, m = p.m, W = p.width();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    const float* a = ape + (p.pos[i] % m) * W;  // ape goes into the gate logits only
    float* z = Zx + i * W;
    for (int64_t j = 0; j < W; ++j) z[j] += a[j];
  }
}

void compressor_pool_forward(const CompressorPool& p, const float* Cx, const float* Zx, float* S_all,
                             float* pooled_all) {
  const int64_t m = p.m, cdim = p.cdim, W = p.width(), slots = p.slots(), NE = p.NE;
  const bool overlap = p.overlap;
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < NE; ++e) {
    const int64_t s0 = p.start[e];
    const bool has_prev = overlap && p.idx[e] > 0;
    float* S = S_all + e * slots * cdim;
    for (int64_t ch = 0; ch < cdim; ++ch) {
      float mx = -std::numeric_limits<float>::infinity();
      auto z_at = [&](int64_t slot) -> float {
        if (overlap) {
          if (slot < m) return Zx[(s0 - m + slot) * W + ch];
          return Zx[(s0 + slot - m) * W + cdim + ch];
        }
        return Zx[(s0 + slot) * W + ch];
      };
      auto c_at = [&](int64_t slot) -> float {
        if (overlap) {
          if (slot < m) return Cx[(s0 - m + slot) * W + ch];
          return Cx[(s0 + slot - m) * W + cdim + ch];
        }
        return Cx[(s0 + slot) * W + ch];
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
      pooled_all[e * cdim + ch] = pooled;
    }
  }
}

void compressor_pool_backward(const CompressorPool& p, const float* Cx, const float* S_all, const float* pooled_all,
                              const float* dpooled, float* dCx, float* dZx) {
  const int64_t m = p.m, cdim = p.cdim, W = p.width(), slots = p.slots(), NE = p.NE;
  const bool overlap = p.overlap;
  // Each (token, channel) feeds at most one entry (CSA: channels [0,c) -> next entry, [c,2c) -> own), so the
  // entries can be processed in parallel without races.
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < NE; ++e) {
    const int64_t s0 = p.start[e];
    const bool has_prev = overlap && p.idx[e] > 0;
    const float* S = S_all + e * slots * cdim;
    const int64_t first = (overlap && !has_prev) ? m : 0;
    for (int64_t ch = 0; ch < cdim; ++ch) {
      const float g = dpooled[e * cdim + ch], pooled = pooled_all[e * cdim + ch];
      for (int64_t k = first; k < slots; ++k) {
        int64_t idx;
        if (overlap)
          idx = k < m ? (s0 - m + k) * W + ch : (s0 + k - m) * W + cdim + ch;
        else
          idx = (s0 + k) * W + ch;
        const float sk = S[k * cdim + ch];
        dCx[idx] = sk * g;
        dZx[idx] = sk * g * (Cx[idx] - pooled);
      }
    }
  }
}

void compressor_ape_backward(const CompressorPool& p, const float* dZx, float* gape) {
  const int64_t N = p.N, m = p.m, W = p.width();
  for (int64_t i = 0; i < N; ++i) {
    float* ga = gape + (p.pos[i] % m) * W;
    const float* z = dZx + i * W;
    for (int64_t j = 0; j < W; ++j) ga[j] += z[j];
  }
}

// ------------------------------------------------------------------ reference
namespace {
// Slot k of entry e, channel ch: the element of the [N, W] inputs it reads; -1 for an empty slot.
int64_t slot_element(const CompressorPool& p, int64_t e, int64_t k, int64_t ch) {
  const int64_t s0 = p.start[e], m = p.m, W = p.width();
  if (!p.overlap) return (s0 + k) * W + ch;
  if (k < m) return p.idx[e] > 0 ? (s0 - m + k) * W + ch : -1;  // the previous block, columns [0, cdim)
  return (s0 + k - m) * W + p.cdim + ch;                        // the own block, columns [cdim, 2 cdim)
}
}  // namespace

void compressor_pool_forward_ref(const CompressorPool& p, const float* Cx, const float* Zx, const float* ape, float* S,
                                 float* pooled) {
  const int64_t m = p.m, cdim = p.cdim, W = p.width(), slots = p.slots();
  std::vector<double> z(static_cast<size_t>(slots));
  for (int64_t e = 0; e < p.NE; ++e) {
    for (int64_t ch = 0; ch < cdim; ++ch) {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < slots; ++k) {
        const int64_t x = slot_element(p, e, k, ch);
        if (x < 0) continue;
        z[size_t(k)] = double(Zx[x]);
        if (ape) z[size_t(k)] += double(ape[(p.pos[x / W] % m) * W + x % W]);
        mx = std::max(mx, z[size_t(k)]);
      }
      double sum = 0;
      for (int64_t k = 0; k < slots; ++k)
        if (slot_element(p, e, k, ch) >= 0) sum += std::exp(z[size_t(k)] - mx);
      double acc = 0;
      for (int64_t k = 0; k < slots; ++k) {
        const int64_t x = slot_element(p, e, k, ch);
        const double s = x < 0 ? 0.0 : std::exp(z[size_t(k)] - mx) / sum;
        S[(e * slots + k) * cdim + ch] = float(s);
        if (x >= 0) acc += s * double(Cx[x]);
      }
      pooled[e * cdim + ch] = float(acc);
    }
  }
}

void compressor_pool_backward_ref(const CompressorPool& p, const float* Cx, const float* S, const float* pooled,
                                  const float* dpooled, float* dCx, float* dZx, float* gape) {
  const int64_t m = p.m, cdim = p.cdim, W = p.width(), slots = p.slots();
  std::vector<double> dz(static_cast<size_t>(p.N * W), 0.0);
  std::fill(dCx, dCx + p.N * W, 0.0f);
  for (int64_t e = 0; e < p.NE; ++e)
    for (int64_t ch = 0; ch < cdim; ++ch) {
      const double g = dpooled[e * cdim + ch], pool = pooled[e * cdim + ch];
      for (int64_t k = 0; k < slots; ++k) {
        const int64_t x = slot_element(p, e, k, ch);
        if (x < 0) continue;
        const double s = S[(e * slots + k) * cdim + ch];
        dCx[x] = float(s * g);                        // d pooled / d Cx = S
        dz[size_t(x)] = s * g * (double(Cx[x]) - pool);  // the softmax's Jacobian: S (Cx - Σ S Cx)
      }
    }
  for (int64_t x = 0; x < p.N * W; ++x) dZx[x] = float(dz[size_t(x)]);
  if (!gape) return;
  std::vector<double> ga(static_cast<size_t>(m * W), 0.0);
  for (int64_t i = 0; i < p.N; ++i)
    for (int64_t j = 0; j < W; ++j) ga[size_t((p.pos[i] % m) * W + j)] += dz[size_t(i * W + j)];
  for (int64_t x = 0; x < m * W; ++x) gape[x] = float(double(gape[x]) + ga[size_t(x)]);
}

}  // namespace trex::nn
