// Double-precision twin of nn::sinkhorn_forward / sinkhorn_backward (sinkhorn_ref.hpp).
#include "sinkhorn_ref.hpp"

#include <algorithm>
#include <cmath>

namespace trex::cuda::check {

namespace {
using Mat = std::vector<double>;

Mat normalise(const Mat& x, int n, double eps, bool by_row) {
  Mat y(x.size());
  for (int a = 0; a < n; ++a) {
    double s = 0;
    for (int b = 0; b < n; ++b) s += by_row ? x[size_t(a * n + b)] : x[size_t(b * n + a)];
    for (int b = 0; b < n; ++b) {
      const size_t idx = size_t(by_row ? a * n + b : b * n + a);
      y[idx] = x[idx] / (s + eps);
    }
  }
  return y;
}

Mat normalise_backward(const Mat& x, const Mat& dy, int n, double eps, bool by_row) {
  Mat dx(x.size());
  for (int a = 0; a < n; ++a) {
    double s = 0, dot = 0;
    for (int b = 0; b < n; ++b) {
      const size_t idx = size_t(by_row ? a * n + b : b * n + a);
      s += x[idx];
      dot += dy[idx] * x[idx];
    }
    const double inv = 1 / (s + eps);
    for (int b = 0; b < n; ++b) {
      const size_t idx = size_t(by_row ? a * n + b : b * n + a);
      dx[idx] = dy[idx] * inv - dot * inv * inv;
    }
  }
  return dx;
}

Mat softmax_rows(const Mat& a, int n) {
  Mat sm(a.size());
  for (int j = 0; j < n; ++j) {
    double mx = a[size_t(j * n)];
    for (int k = 1; k < n; ++k) mx = std::max(mx, a[size_t(j * n + k)]);
    double s = 0;
    for (int k = 0; k < n; ++k) s += (sm[size_t(j * n + k)] = std::exp(a[size_t(j * n + k)] - mx));
    for (int k = 0; k < n; ++k) sm[size_t(j * n + k)] /= s;
  }
  return sm;
}

Mat plus(const Mat& x, double eps) {
  Mat y = x;
  for (double& v : y) v += eps;
  return y;
}
}  // namespace

std::vector<double> sinkhorn_forward_double(const std::vector<double>& a, int n, int iters, double eps) {
  Mat m = normalise(plus(softmax_rows(a, n), eps), n, eps, false);
  for (int it = 1; it < iters; ++it) m = normalise(normalise(m, n, eps, true), n, eps, false);
  return m;
}

std::vector<double> sinkhorn_forward_double(const float* a, int n, int iters, double eps) {
  return sinkhorn_forward_double(Mat(a, a + n * n), n, iters, eps);
}

std::vector<double> sinkhorn_backward_double(const float* a, const float* dm, int n, int iters, double eps) {
  const Mat sm = softmax_rows(Mat(a, a + n * n), n);
  // st[i + 1] = normalise(st[i]): column for i = 0, then row for odd i, column for even i
  const int steps = 2 * iters;
  std::vector<Mat> st{plus(sm, eps)};
  for (int i = 0; i + 1 <= steps - 2; ++i) st.push_back(normalise(st.back(), n, eps, i % 2 == 1));
  Mat g(dm, dm + n * n);
  for (int i = steps - 2; i >= 0; --i) g = normalise_backward(st[size_t(i)], g, n, eps, i % 2 == 1);
  Mat da(g.size());
  for (int j = 0; j < n; ++j) {
    double dot = 0;
    for (int k = 0; k < n; ++k) dot += g[size_t(j * n + k)] * sm[size_t(j * n + k)];
    for (int k = 0; k < n; ++k) da[size_t(j * n + k)] = sm[size_t(j * n + k)] * (g[size_t(j * n + k)] - dot);
  }
  return da;
}

}  // namespace trex::cuda::check
