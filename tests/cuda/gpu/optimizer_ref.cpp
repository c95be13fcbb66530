// The CPU side of the optimizer op checks (optimizer_ref.hpp).
#include "optimizer_ref.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>

#include "nn/gemm_bf16.hpp"

namespace trex::cuda::check {

namespace {
constexpr double kU = 1.0 / 16777216.0;  // 2^-24, fp32 unit roundoff

struct Coeffs {
  double a, b, c;
};
// train/optimizer.cpp's schedule (also cuda::newton_schulz_coefficients; the checks compare both to the CPU)
Coeffs coeffs(int s) { return s < 8 ? Coeffs{3.4445, -4.7750, 2.0315} : Coeffs{2.0, -1.5, 0.5}; }

// x [rows, cols] -> the wide orientation [r, c] (r <= c) as train::newton_schulz_reference lays it out, and back.
template <class T>
std::vector<T> to_wide(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<T> w(x.size());
  const bool tr = rows > cols;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) w[size_t(tr ? j * rows + i : i * cols + j)] = T(x[size_t(i * cols + j)]);
  return w;
}
template <class T>
std::vector<float> from_wide(const std::vector<T>& w, int64_t rows, int64_t cols) {
  std::vector<float> x(w.size());
  const bool tr = rows > cols;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) x[size_t(i * cols + j)] = float(w[size_t(tr ? j * rows + i : i * cols + j)]);
  return x;
}

float bf16(float v) { return nn::bf16_to_float(nn::float_to_bf16(v)); }
std::vector<float> bf16(const std::vector<float>& v) {
  std::vector<float> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = bf16(v[i]);
  return r;
}
}  // namespace

std::vector<float> newton_schulz_double(const std::vector<float>& xin, int64_t rows, int64_t cols, int steps) {
  const int r = int(std::min(rows, cols)), c = int(std::max(rows, cols));
  std::vector<double> x = to_wide<double>(xin, rows, cols), y(x.size()), A(size_t(r) * r), B(A.size());
  double norm = 0;
  for (double v : x) norm += v * v;
  norm = std::sqrt(norm) + 1e-7;
  for (double& v : x) v /= norm;
  for (int s = 0; s < steps; ++s) {
    const Coeffs k = coeffs(s);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, r, r, c, 1.0, x.data(), c, x.data(), c, 0.0, A.data(), r);
    B = A;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r, r, r, k.c, A.data(), r, A.data(), r, k.b, B.data(), r);
    y = x;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r, c, r, 1.0, B.data(), r, x.data(), c, k.a, y.data(), c);
    x.swap(y);
  }
  return from_wide(x, rows, cols);
}

std::vector<float> newton_schulz_bf16_operands(const std::vector<float>& xin, int64_t rows, int64_t cols,
                                               int steps) {
  const int r = int(std::min(rows, cols)), c = int(std::max(rows, cols));
  std::vector<float> x = to_wide<float>(xin, rows, cols), y, A(size_t(r) * r), B;
  double norm = 0;
  for (float v : x) norm += double(v) * double(v);
  const float inv = float(1.0 / (std::sqrt(norm) + 1e-7));
  for (float& v : x) v *= inv;
  for (int s = 0; s < steps; ++s) {
    const Coeffs k = coeffs(s);
    // bf16 products are exact in fp32; the sums are fp32, as on the device
    const std::vector<float> x16 = bf16(x);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, r, r, c, 1.0f, x16.data(), c, x16.data(), c, 0.0f, A.data(),
                r);
    B = A;
    const std::vector<float> a16 = bf16(A);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r, r, r, float(k.c), a16.data(), r, a16.data(), r,
                float(k.b), B.data(), r);
    const std::vector<float> b16 = bf16(B);
    y = x;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r, c, r, 1.0f, b16.data(), r, x16.data(), c, float(k.a),
                y.data(), c);
    x.swap(y);
  }
  return from_wide(x, rows, cols);
}

void AdamWBound::step(const float* p, const float* m, const float* v, const float* g, float gs, float decay,
                      float beta1, float beta2, float step_size, float inv_sqrt_bc2, float eps) {
  const double b1 = beta1, b2 = beta2, c1 = double(1.0f - beta1), c2 = double(1.0f - beta2);
  for (size_t i = 0; i < ep_.size(); ++i) {
    const double gi = double(g[i] * gs);  // one float product on both sides (never contracted: it is used twice)
    // each side's a*b + c*d is within 2u of the exact sum of magnitudes (with or without an FMA): 4u between them
    const double sm = std::fabs(b1 * m[i]) + std::fabs(c1 * gi);
    const double mn = b1 * m[i] + c1 * gi;
    em_[i] = b1 * em_[i] + 4 * kU * sm;
    const double sv = b2 * v[i] + c2 * gi * gi;  // every term >= 0: a relative bound
    rv_[i] = sv > 0 ? (b2 * v[i] * rv_[i] + 6 * kU * sv) / sv : 0.0;
    const double s = std::sqrt(sv), denom = s * inv_sqrt_bc2 + eps;
    const double ed = s * inv_sqrt_bc2 * (rv_[i] / 2 + 4 * kU) + 2 * kU * denom;
    const double upd = double(step_size) * mn / denom;
    const double eupd = double(step_size) * em_[i] / denom + std::fabs(upd) * (ed / denom + 4 * kU);
    const double pd = double(p[i]) * decay;
    ep_[i] = double(decay) * ep_[i] + 2 * kU * std::fabs(pd) + eupd + 2 * kU * std::fabs(pd - upd);
  }
}

std::vector<double> AdamWBound::p_bound() const {
  std::vector<double> b(ep_.size());
  for (size_t i = 0; i < b.size(); ++i) b[i] = 2 * ep_[i];
  return b;
}

std::vector<double> AdamWBound::m_bound() const {
  std::vector<double> b(em_.size());
  for (size_t i = 0; i < b.size(); ++i) b[i] = 2 * em_[i];
  return b;
}

std::vector<double> AdamWBound::v_bound(const float* v_after) const {
  std::vector<double> b(rv_.size());
  for (size_t i = 0; i < b.size(); ++i) b[i] = 2 * rv_[i] * std::fabs(double(v_after[i]));
  return b;
}

}  // namespace trex::cuda::check
