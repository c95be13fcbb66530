// Element-wise kernels: fast vs reference, finite-difference checks of every backward, and spec values
// (YaRN ramp bounds, Sinkhorn doubly-stochastic, top-k ties to the lower index).
#include "nn/ops.hpp"

#include "nn/gemm_bf16.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "util/rng.hpp"
#include "float_vectors.hpp"

using namespace trex::nn;

namespace {
using trex::testing::randn;
// Central difference of f at x[i] (f evaluated in double from a float function).
double fd(std::vector<float>& x, size_t i, const std::function<double()>& f, float eps) {
  const float keep = x[i];
  x[i] = keep + eps;
  const double fp = f();
  x[i] = keep - eps;
  const double fm = f();
  x[i] = keep;
  return (fp - fm) / (2.0 * double(eps));
}
double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
  return s;
}
}  // namespace

TEST(RmsNorm, FastMatchesReferenceAndFiniteDifferences) {
  trex::Rng rng(1);
  const int64_t rows = 7, dim = 24;
  for (bool weighted : {true, false}) {
    auto x = randn(rng, rows * dim), w = randn(rng, dim, 0.3), gy = randn(rng, rows * dim);
    for (auto& v : w) v += 1.0f;
    const float* wp = weighted ? w.data() : nullptr;
    std::vector<float> y(x.size()), yr(x.size()), rs(rows), rr(rows);
    rmsnorm_forward(x.data(), wp, y.data(), rs.data(), rows, dim, 1e-6f);
    rmsnorm_forward_ref(x.data(), wp, yr.data(), rr.data(), rows, dim, 1e-6f);
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], yr[i], 1e-5);
    std::vector<float> dx(x.size()), dxr(x.size()), dw(dim, 0), dwr(dim, 0);
    rmsnorm_backward(x.data(), wp, rs.data(), gy.data(), dx.data(), dw.data(), rows, dim, false);
    rmsnorm_backward_ref(x.data(), wp, rr.data(), gy.data(), dxr.data(), dwr.data(), rows, dim, false);
    for (size_t i = 0; i < dx.size(); ++i) ASSERT_NEAR(dx[i], dxr[i], 1e-4);
    for (int64_t i = 0; i < dim; ++i) ASSERT_NEAR(dw[i], dwr[i], 1e-4);
    auto loss = [&] {
      std::vector<float> yy(x.size()), r2(rows);
      rmsnorm_forward_ref(x.data(), wp, yy.data(), r2.data(), rows, dim, 1e-6f);
      return dot(yy, gy);
    };
    for (size_t i = 0; i < x.size(); i += 5) EXPECT_NEAR(fd(x, i, loss, 1e-2f), dxr[i], 2e-3) << i;
    if (weighted) {
      for (int64_t i = 0; i < dim; ++i) EXPECT_NEAR(fd(w, size_t(i), loss, 1e-2f), dwr[size_t(i)], 2e-3) << i;
    }
  }
}

TEST(Rope, FastMatchesReferenceInverseAndYarnRamp) {
  // §3: base 160000, r = 64, YaRN factor 16, L0 65536, beta 32/1 -> ramp from lo = 15 to hi = 25
  RopeTable t = make_rope_table(64, 40, 160000.0, true, 16.0, 65536, 32.0, 1.0);
  for (int i = 0; i < 32; ++i) {
    const double w = std::pow(160000.0, -2.0 * i / 64.0);
    if (i <= 15) {
      EXPECT_DOUBLE_EQ(t.omega[size_t(i)], w) << i;
    }
    if (i >= 25) {
      EXPECT_NEAR(t.omega[size_t(i)], w / 16.0, 1e-15) << i;
    }
    if (i > 15 && i < 25) {
      EXPECT_LT(t.omega[size_t(i)], w);
      EXPECT_GT(t.omega[size_t(i)], w / 16.0);
    }
  }
  trex::Rng rng(2);
  const int64_t n = 9, heads = 3, hd = 80;
  auto x = randn(rng, n * heads * hd);
  std::vector<int32_t> pos(n);
  for (int64_t i = 0; i < n; ++i) pos[size_t(i)] = int32_t(i * 4 % 37);
  auto a = x, b = x;
  rope_apply(a.data(), n, heads, hd, pos.data(), t, false);
  rope_apply_ref(b.data(), n, heads, hd, pos.data(), t, false);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-5);
  for (int64_t i = 0; i < n * heads; ++i)  // non-rotary dims untouched (RoPE on the LAST r dims)
    for (int64_t j = 0; j < hd - 64; ++j) ASSERT_EQ(a[size_t(i * hd + j)], x[size_t(i * hd + j)]);
  rope_apply(a.data(), n, heads, hd, pos.data(), t, true);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], x[i], 1e-5);
  // interleaved pairs: position 1 rotates (x0, x1) of the rotary slice by omega_0
  std::vector<float> v(hd, 0.0f);
  v[size_t(hd - 64)] = 1.0f;
  int32_t p1 = 1;
  rope_apply(v.data(), 1, 1, hd, &p1, t, false);
  EXPECT_NEAR(v[size_t(hd - 64)], std::cos(t.omega[0]), 1e-6);
  EXPECT_NEAR(v[size_t(hd - 63)], std::sin(t.omega[0]), 1e-6);
}

TEST(SwiGlu, FastMatchesReferenceAndFiniteDifferences) {
  trex::Rng rng(3);
  const int64_t n = 400;
  auto g = randn(rng, n, 3.0), u = randn(rng, n, 3.0), dh = randn(rng, n);
  for (float limit : {0.0f, 2.0f}) {
    std::vector<float> h(n), hr(n), dg(n), du(n), dgr(n), dur(n);
    swiglu_forward(g.data(), u.data(), h.data(), n, limit);
    swiglu_forward_ref(g.data(), u.data(), hr.data(), n, limit);
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(h[size_t(i)], hr[size_t(i)], 1e-5);
    swiglu_backward(g.data(), u.data(), dh.data(), dg.data(), du.data(), n, limit);
    swiglu_backward_ref(g.data(), u.data(), dh.data(), dgr.data(), dur.data(), n, limit);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(dg[size_t(i)], dgr[size_t(i)], 1e-5);
      ASSERT_NEAR(du[size_t(i)], dur[size_t(i)], 1e-5);
    }
    auto loss = [&] {
      std::vector<float> hh(n);
      swiglu_forward_ref(g.data(), u.data(), hh.data(), n, limit);
      return dot(hh, dh);
    };
    int clamped = 0;
    for (int64_t i = 0; i < n; ++i) {
      // skip points within eps of a clamp kink
      if (limit > 0 && (std::fabs(g[size_t(i)] - limit) < 0.02f || std::fabs(std::fabs(u[size_t(i)]) - limit) < 0.02f))
        continue;
      clamped += limit > 0 && (g[size_t(i)] > limit || std::fabs(u[size_t(i)]) > limit);
      EXPECT_NEAR(fd(g, size_t(i), loss, 1e-3f), dgr[size_t(i)], 2e-2) << i;
      EXPECT_NEAR(fd(u, size_t(i), loss, 1e-3f), dur[size_t(i)], 2e-2) << i;
    }
    if (limit > 0) {
      EXPECT_GT(clamped, 10);  // the clamp paths were exercised
    }
  }
}

TEST(Sinkhorn, DoublyStochasticAndFiniteDifferences) {
  trex::Rng rng(4);
  const int n = 4, iters = 20;
  const float eps = 1e-6f;
  auto a = randn(rng, 16, 2.0), gm = randn(rng, 16);
  std::vector<float> m(16);
  sinkhorn_forward(a.data(), m.data(), n, iters, eps);
  for (int j = 0; j < n; ++j) {
    double rs = 0, cs = 0;
    for (int k = 0; k < n; ++k) {
      rs += m[size_t(j * n + k)];
      cs += m[size_t(k * n + j)];
    }
    EXPECT_NEAR(cs, 1.0, 1e-5);  // last step normalises columns
    EXPECT_NEAR(rs, 1.0, 1e-2);
  }
  std::vector<float> da(16);
  sinkhorn_backward(a.data(), gm.data(), da.data(), n, iters, eps);
  auto loss = [&] {
    std::vector<float> mm(16);
    sinkhorn_forward(a.data(), mm.data(), n, iters, eps);
    return dot(mm, gm);
  };
  for (size_t i = 0; i < 16; ++i) EXPECT_NEAR(fd(a, i, loss, 1e-2f), da[i], 3e-3) << i;
}

// The batched kernels (8 matrices in vector lanes, a padded tail block, strided inputs and outputs) against the
// scalar functions for every matrix: the forward bit for bit, the backward to float rounding.
TEST(Sinkhorn, BatchedMatchesScalar) {
  trex::Rng rng(9);
  for (int n : {2, 4, 8})
    for (int64_t count : {1, 7, 8, 19}) {
      const int nn2 = n * n, iters = 20;
      const float eps = 1e-6f;
      const int64_t stride = nn2 + 3;  // strided rows, as mHC's gate block is
      auto a = randn(rng, size_t(count * stride), 2.0), gm = randn(rng, size_t(count * stride));
      std::vector<float> m(size_t(count * stride), -7.0f), da(size_t(count * stride), -7.0f);
      sinkhorn_forward_batch(a.data(), stride, m.data(), stride, count, n, iters, eps);
      sinkhorn_backward_batch(a.data(), stride, gm.data(), stride, da.data(), stride, count, n, iters, eps);
      for (int64_t t = 0; t < count; ++t) {
        std::vector<float> m1(static_cast<size_t>(nn2)), da1(static_cast<size_t>(nn2));
        sinkhorn_forward(a.data() + t * stride, m1.data(), n, iters, eps);
        sinkhorn_backward(a.data() + t * stride, gm.data() + t * stride, da1.data(), n, iters, eps);
        for (int i = 0; i < nn2; ++i) {
          ASSERT_EQ(m[size_t(t * stride + i)], m1[size_t(i)]) << "n " << n << " count " << count << " t " << t;
          // backward: the compiler contracts a*b - c*d into FMAs differently for vectors and scalars
          ASSERT_NEAR(da[size_t(t * stride + i)], da1[size_t(i)], 1e-6 * (1.0 + std::fabs(da1[size_t(i)])))
              << "n " << n << " count " << count << " t " << t;
        }
        for (int64_t i = nn2; i < stride; ++i) ASSERT_EQ(m[size_t(t * stride + i)], -7.0f);  // gaps untouched
      }
    }
}

TEST(SoftmaxXent, FastMatchesReferenceAndFiniteDifferences) {
  trex::Rng rng(5);
  const int64_t rows = 6, V = 11;
  auto logits = randn(rng, rows * V, 2.0);
  std::vector<int32_t> tgt = {3, -1, 0, 10, 5, -1};
  std::vector<float> d(rows * V), dr(rows * V);
  const double l = softmax_xent(logits.data(), tgt.data(), d.data(), rows, V, 0.25f);
  const double lr = softmax_xent_ref(logits.data(), tgt.data(), dr.data(), rows, V, 0.25f);
  EXPECT_NEAR(l, lr, 1e-5);
  for (size_t i = 0; i < d.size(); ++i) ASSERT_NEAR(d[i], dr[i], 1e-6);
  for (int64_t j = 0; j < V; ++j) EXPECT_EQ(d[size_t(V + j)], 0.0f);  // ignored row
  auto loss = [&] {
    std::vector<float> tmp(rows * V);
    return softmax_xent_ref(logits.data(), tgt.data(), tmp.data(), rows, V, 0.25f);
  };
  for (size_t i = 0; i < logits.size(); i += 3) EXPECT_NEAR(fd(logits, i, loss, 1e-2f), dr[i], 1e-3) << i;
}

// The bf16 gradient is the fp32 one rounded by float_to_bf16, the loss the same bits (ignored rows zero).
TEST(SoftmaxXent, Bf16GradientIsTheRoundedFp32Gradient) {
  trex::Rng rng(7);
  const int64_t rows = 37, V = 301;  // a row length that leaves a tail after the 32-wide conversion
  auto logits = randn(rng, rows * V, 3.0);
  std::vector<int32_t> tgt(rows);
  for (int64_t i = 0; i < rows; ++i) tgt[size_t(i)] = i % 7 == 3 ? -1 : int32_t((i * 37) % V);
  std::vector<float> d(rows * V);
  std::vector<uint16_t> d16(rows * V, 0xffff);
  const double l = softmax_xent(logits.data(), tgt.data(), d.data(), rows, V, 0.25f);
  const double l16 = softmax_xent(logits.data(), tgt.data(), nullptr, rows, V, 0.25f, d16.data());
  EXPECT_EQ(l, l16);
  for (size_t i = 0; i < d.size(); ++i) ASSERT_EQ(d16[i], trex::nn::float_to_bf16(d[i])) << i;
  for (int64_t j = 0; j < V; ++j) EXPECT_EQ(d16[size_t(3 * V + j)], 0);  // ignored row
}

TEST(RouterAffinity, SqrtSoftplusGradient) {
  for (float s : {-5.0f, -0.3f, 0.0f, 0.7f, 4.0f, 30.0f}) {
    const double h = 1e-3;
    const double num = (double(sqrt_softplus(float(s + h))) - double(sqrt_softplus(float(s - h)))) / (2 * h);
    EXPECT_NEAR(sqrt_softplus_grad(s, sqrt_softplus(s)), num, 2e-3) << s;
    EXPECT_NEAR(sqrt_softplus(s), std::sqrt(std::log1p(std::exp(double(s)))), 1e-5) << s;
  }
}

TEST(TopK, TiesGoToTheLowerIndex) {
  const std::vector<float> s = {0.0f, 2.0f, 0.0f, 2.0f, 1.0f, 0.0f};
  int32_t out[4];
  topk_lower_index(s.data(), 6, 4, out);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 3);
  EXPECT_EQ(out[2], 4);
  EXPECT_EQ(out[3], 0);
}
