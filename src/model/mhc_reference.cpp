// mHC reference (see mhc_reference.hpp).
#include "model/mhc_reference.hpp"

#include <cmath>
#include <vector>

namespace trex::model {

void hc_pre_reference(int64_t n, int64_t d, int iters, double eps, double hc_eps, const float* X, const float* fn,
                      const float* base, const float* scale, double* y, double* pre, double* post, double* M) {
  const int64_t nd = n * d, nout = (2 + n) * n;
  double ss = 0;
  for (int64_t i = 0; i < nd; ++i) ss += double(X[i]) * X[i];
  const double rho = 1.0 / std::sqrt(ss / double(nd) + eps);  // weightless RMS factor, applied after the matmul
  std::vector<double> mix(static_cast<size_t>(nout));
  for (int64_t o = 0; o < nout; ++o) {
    double acc = 0;
    for (int64_t i = 0; i < nd; ++i) acc += double(fn[o * nd + i]) * X[i];
    mix[size_t(o)] = acc * rho;
  }
  auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  for (int64_t k = 0; k < n; ++k) {
    pre[k] = sig(scale[0] * mix[size_t(k)] + base[k]) + hc_eps;
    post[k] = 2.0 * sig(scale[1] * mix[size_t(n + k)] + base[n + k]);
  }
  for (int64_t j = 0; j < n; ++j) {  // row softmax + eps
    double mx = -1e300, s = 0;
    for (int64_t k = 0; k < n; ++k) mx = std::max(mx, scale[2] * mix[size_t(2 * n + j * n + k)] + base[2 * n + j * n + k]);
    for (int64_t k = 0; k < n; ++k)
      s += (M[j * n + k] = std::exp(scale[2] * mix[size_t(2 * n + j * n + k)] + base[2 * n + j * n + k] - mx));
    for (int64_t k = 0; k < n; ++k) M[j * n + k] = M[j * n + k] / s + hc_eps;
  }
  auto colnorm = [&] {
    for (int64_t k = 0; k < n; ++k) {
      double s = 0;
      for (int64_t j = 0; j < n; ++j) s += M[j * n + k];
      for (int64_t j = 0; j < n; ++j) M[j * n + k] /= s + hc_eps;
    }
  };
  auto rownorm = [&] {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += M[j * n + k];
      for (int64_t k = 0; k < n; ++k) M[j * n + k] /= s + hc_eps;
    }
  };
  colnorm();
  for (int it = 1; it < iters; ++it) {
    rownorm();
    colnorm();
  }
  for (int64_t i = 0; i < d; ++i) {
    y[i] = 0;
    for (int64_t k = 0; k < n; ++k) y[i] += pre[k] * X[k * d + i];
  }
}

void hc_post_reference(int64_t n, int64_t d, const float* F, const float* X, const double* post, const double* M,
                       double* Xout) {
  for (int64_t k = 0; k < n; ++k)
    for (int64_t i = 0; i < d; ++i) {
      double v = post[k] * F[i];
      for (int64_t j = 0; j < n; ++j) v += M[j * n + k] * X[j * d + i];  // j: input stream, k: output stream
      Xout[k * d + i] = v;
    }
}

}  // namespace trex::model
