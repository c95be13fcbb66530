// MoE routing arithmetic (moe_route.hpp): the operations and their order are model/moe.cpp's as they were before
// their extraction (the model's bits are unchanged).
#include "nn/moe_route.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "nn/ops.hpp"

namespace trex::nn {

void moe_select_token(const float* a, const float* bias, const int64_t* hash_row, int64_t E, int64_t k, float R,
                      float* biased, int32_t* sel, float* w) {
  if (hash_row) {
    for (int64_t j = 0; j < k; ++j) sel[j] = int32_t(hash_row[j]);
  } else {
    for (int64_t e = 0; e < E; ++e) biased[e] = bias ? a[e] + bias[e] : a[e];  // bias: selection only
    topk_lower_index(biased, E, k, sel);
  }
  float sum = 0;
  for (int64_t j = 0; j < k; ++j) sum += a[sel[j]];
  for (int64_t j = 0; j < k; ++j) w[j] = R * a[sel[j]] / sum;
}

void moe_route_forward(const float* scores, const float* bias, const int64_t* tid2eid, const int32_t* tokens,
                       int64_t N, int64_t E, int64_t k, float R, float* a, int32_t* sel, float* w) {
#pragma omp parallel
  {
    std::vector<float> biased(static_cast<size_t>(E));
#pragma omp for schedule(static)
    for (int64_t i = 0; i < N; ++i) {
      float* ai = a + i * E;
      for (int64_t e = 0; e < E; ++e) ai[e] = sqrt_softplus(scores[i * E + e]);
      const int64_t* hash_row = tid2eid ? tid2eid + int64_t(tokens[i]) * k : nullptr;
      moe_select_token(ai, bias, hash_row, E, k, R, biased.data(), sel + i * k, w + i * k);
    }
  }
}

void moe_route_select(const float* a, const float* bias, const int64_t* tid2eid, const int32_t* tokens, int64_t N,
                      int64_t E, int64_t k, float R, int32_t* sel, float* w) {
#pragma omp parallel
  {
    std::vector<float> biased(static_cast<size_t>(E));
#pragma omp for schedule(static)
    for (int64_t i = 0; i < N; ++i) {
      const int64_t* hash_row = tid2eid ? tid2eid + int64_t(tokens[i]) * k : nullptr;
      moe_select_token(a + i * E, bias, hash_row, E, k, R, biased.data(), sel + i * k, w + i * k);
    }
  }
}

void moe_group_rows(const int32_t* sel, int64_t N, int64_t E, int64_t k, int64_t* counts, int64_t* offsets,
                    int32_t* order_tok, int32_t* order_slot, int32_t* row_of) {
  std::fill(counts, counts + E, int64_t(0));
  for (int64_t i = 0; i < N * k; ++i) ++counts[sel[i]];
  offsets[0] = 0;
  for (int64_t e = 0; e < E; ++e) offsets[e + 1] = offsets[e] + counts[e];
  std::vector<int64_t> fill(offsets, offsets + E);  // next free row of each expert
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < k; ++j) {
      const int64_t r = fill[size_t(sel[i * k + j])]++;
      order_tok[r] = int32_t(i);
      order_slot[r] = int32_t(j);
      row_of[i * k + j] = int32_t(r);
    }
}

void moe_gather_rows(const float* x, const float* w, const int32_t* order_tok, const int32_t* order_slot,
                     int64_t rows, int64_t k, int64_t d, float* xg, float* wl) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(xg + r * d, x + int64_t(order_tok[r]) * d, size_t(d) * 4);
    if (w && wl) wl[r] = w[int64_t(order_tok[r]) * k + order_slot[r]];
  }
}

void moe_scatter_add_rows(const int32_t* row_of, int64_t N, int64_t k, int64_t d, const float* rows, float* out) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    float* o = out + i * d;
    int32_t last = -1;
    for (int64_t n = 0; n < k; ++n) {  // the token's rows in increasing order (k is small)
      int32_t r = std::numeric_limits<int32_t>::max();
      for (int64_t j = 0; j < k; ++j)
        if (row_of[i * k + j] > last) r = std::min(r, row_of[i * k + j]);
      last = r;
      const float* y = rows + int64_t(r) * d;
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) o[j] += y[j];
    }
  }
}

double moe_balance_loss(const float* a, const int32_t* sel, int64_t B, int64_t T, int64_t E, int64_t k,
                        double alpha) {
  double loss = 0;
  for (int64_t bi = 0; bi < B; ++bi) {
    std::vector<double> cnt(size_t(E), 0.0), P(size_t(E), 0.0);
    for (int64_t t = 0; t < T; ++t) {
      const int64_t i = bi * T + t;
      for (int64_t j = 0; j < k; ++j) cnt[size_t(sel[i * k + j])] += 1;
      double A = 0;
      for (int64_t e = 0; e < E; ++e) A += a[i * E + e];
      for (int64_t e = 0; e < E; ++e) P[size_t(e)] += a[i * E + e] / A / double(T);
    }
    double row = 0;
    for (int64_t e = 0; e < E; ++e) row += double(E) / double(k * T) * cnt[size_t(e)] * P[size_t(e)];
    loss += alpha * row / double(B);
  }
  return loss;
}

void moe_route_backward(const float* scores, const float* a_all, const int32_t* sel_all, const float* dw,
                        int64_t N, int64_t E, int64_t k, float R, bool balance, int64_t B, int64_t T, double alpha,
                        float* ds) {
  // weights w_i = R a_i / sum_sel a (+ balance loss on all affinities), then a = sqrt(softplus(s))
  std::vector<double> frow(size_t(B * E), 0.0);  // d(balance row)/d(P_b[e]) / alpha, the counts held constant
  if (balance)
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < k; ++j) frow[size_t((i / T) * E + sel_all[i * k + j])] += double(E) / double(k * T);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < N; ++i) {
    const float* a = a_all + i * E;
    float* dsi = ds + i * E;
    for (int64_t e = 0; e < E; ++e) dsi[e] = 0;
    const int32_t* sel = sel_all + i * k;
    float S = 0, dot = 0;
    for (int64_t j = 0; j < k; ++j) {
      S += a[sel[j]];
      dot += dw[i * k + j] * a[sel[j]];
    }
    for (int64_t j = 0; j < k; ++j) dsi[sel[j]] += R / S * (dw[i * k + j] - dot / S);  // da
    if (balance) {
      const double* fr = frow.data() + (i / T) * E;
      double A = 0, fp = 0;
      for (int64_t e = 0; e < E; ++e) A += a[e];
      for (int64_t e = 0; e < E; ++e) fp += fr[e] * a[e] / A;
      const double coef = alpha / (double(B) * double(T) * A);
      for (int64_t e = 0; e < E; ++e) dsi[e] += float(coef * (fr[e] - fp));
    }
    for (int64_t e = 0; e < E; ++e) dsi[e] *= sqrt_softplus_grad(scores[i * E + e], a[e]);
  }
}

}  // namespace trex::nn
