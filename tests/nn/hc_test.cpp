// mHC's arithmetic around its GEMMs and Sinkhorn (nn/hc.hpp): the fast path (model/mhc.cpp's loops) against the
// double references, function by function; the references' backward against central differences of their forward
// (the mix scaling with rho(X), the gates and y, hc_post, hc_head, each under a scalar loss of random weights); and
// the device's token order of the gate-parameter gradients (cuda/hc.cu, replayed in fp32) within the bound the gpu
// check applies, which a skipped token or a perturbed value falls outside of.
#include "nn/hc.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "nn/gemm_bf16.hpp"
#include "util/rng.hpp"
#include "float_vectors.hpp"

using namespace trex::nn;

namespace {

using trex::testing::randn;
template <class T>
std::vector<T> uniform(trex::Rng& r, size_t n, double lo, double hi) {
  std::vector<T> v(n);
  for (auto& x : v) x = T(r.uniform(lo, hi));
  return v;
}

// One token batch's inputs: X [N, n, d], raw [N, nout] (the GEMM's output), gate parameters, the backward's
// incoming gradients; F, post, M for hc_post.
template <class T>
struct HcProblem {
  int64_t N = 0, d = 0;
  int n = 0, nout = 0;
  double eps = 1e-6, heps = 1e-6;
  std::vector<T> X, raw, base, scale, dy, dpost, dA, F, post, M, dXout, dX0;
  HcProblem(uint64_t seed, int64_t N_, int n_, int64_t d_, bool head) : N(N_), d(d_), n(n_) {
    trex::Rng r(seed);
    nout = head ? n : (2 + n) * n;
    X = randn<T>(r, size_t(N * n * d));
    raw = randn<T>(r, size_t(N * nout), 1.5);
    base = randn<T>(r, size_t(nout), 0.5);
    scale = uniform<T>(r, head ? 1 : 3, 0.5, 1.5);
    dy = randn<T>(r, size_t(N * d));
    dpost = randn<T>(r, size_t(N * n));
    dA = randn<T>(r, size_t(N * n * n));
    F = randn<T>(r, size_t(N * d));
    post = uniform<T>(r, size_t(N * n), 0.1, 1.9);
    M = uniform<T>(r, size_t(N * n * n), 0.0, 0.5);
    dXout = randn<T>(r, size_t(N * n * d));
    dX0 = randn<T>(r, size_t(N * n * d), 0.5);  // what dX holds before the backward adds into it
  }
};

// |fast - ref| <= tol (|ref| + scale): the fp32 fast path's sums of a few dozen to a thousand terms of O(1).
void expect_close(const char* what, const std::vector<float>& fast, const std::vector<float>& ref, double tol,
                  double scale = 1.0) {
  ASSERT_EQ(fast.size(), ref.size()) << what;
  int64_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double e = std::fabs(double(fast[i]) - double(ref[i])), allowed = tol * (std::fabs(double(ref[i])) + scale);
    worst = std::max(worst, e / allowed);
    if (!(e <= allowed)) ++bad;
  }
  EXPECT_EQ(bad, 0) << what << ": worst error / allowed " << worst;
}

constexpr double kTol = 2e-6;  // ≈ 32 fp32 roundings: the per-element sums here are over d or n d

// ------------------------------------------------------------------ fast path vs the references
void check_pre(uint64_t seed, int64_t N, int n, int64_t d) {
  SCOPED_TRACE(testing::Message() << "pre N " << N << " n " << n << " d " << d);
  HcProblem<float> p(seed, N, n, d, false);
  const int64_t nd = n * d;
  const int nout = p.nout;
  const float eps = float(p.eps), heps = float(p.heps);
  // forward
  std::vector<float> rho(static_cast<size_t>(N)), rrho(static_cast<size_t>(N)), mix(size_t(N * nout)), rmix(mix.size());
  std::vector<uint16_t> X16(size_t(N * nd)), want16(X16.size());
  hc_mix_rho(p.X.data(), N, nd, eps, rho.data(), X16.data());
  hc_mix_rho_ref(p.X.data(), N, nd, p.eps, rrho.data());
  expect_close("rho", rho, rrho, kTol, 0.0);
  round_to_bf16(p.X.data(), want16.data(), N * nd);
  EXPECT_EQ(std::memcmp(X16.data(), want16.data(), X16.size() * 2), 0) << "the bf16 copy";
  hc_mix_scale(p.raw.data(), rho.data(), N, nout, mix.data());
  std::vector<float> pre(size_t(N * n)), post(pre.size()), A(size_t(N * n * n)), y(size_t(N * d));
  std::vector<float> rpre(pre.size()), rpost(pre.size()), rA(A.size()), ry(y.size());
  hc_pre_gates_forward(p.X.data(), mix.data(), N, n, d, p.base.data(), p.scale.data(), heps, pre.data(), post.data(),
                       A.data(), y.data());
  hc_pre_forward_ref(p.X.data(), p.raw.data(), rho.data(), N, n, d, p.base.data(), p.scale.data(), p.heps,
                     rmix.data(), rpre.data(), rpost.data(), rA.data(), ry.data());
  expect_close("mix", mix, rmix, kTol, 0.0);
  expect_close("pre", pre, rpre, kTol);
  expect_close("post", post, rpost, kTol);
  expect_close("A", A, rA, kTol);
  expect_close("y", y, ry, kTol);
  // backward (the GEMMs and the Sinkhorn aside: dA stands for the Sinkhorn's dz columns)
  std::vector<float> dz(size_t(N * nout)), dmix(dz.size()), draw(dz.size()), coef(static_cast<size_t>(N)), dX = p.dX0;
  std::vector<float> gbase(size_t(nout), 0.25f), gsc(3, -0.5f);
  hc_pre_gates_backward(p.X.data(), mix.data(), pre.data(), p.dy.data(), p.dpost.data(), N, n, d, p.base.data(),
                        p.scale.data(), heps, dz.data(), dX.data());
  for (int64_t t = 0; t < N; ++t)
    for (int k = 0; k < n * n; ++k) dz[size_t(t * nout + 2 * n + k)] = p.dA[size_t(t * n * n + k)];
  hc_gate_dmix(dz.data(), N, n, nout, p.scale.data(), dmix.data());
  hc_gate_param_grads(dz.data(), mix.data(), N, n, nout, gbase.data(), gsc.data());
  hc_mix_backward_coef(dmix.data(), p.raw.data(), rho.data(), N, nout, nd, draw.data(), coef.data());
  hc_mix_backward_add_rows(coef.data(), p.X.data(), N, nd, dX.data());
  std::vector<float> rdz(dz.size()), rdraw(dz.size()), rcoef(static_cast<size_t>(N)), rdX = p.dX0;
  std::vector<float> rgbase(size_t(nout), 0.25f), rgsc(3, -0.5f);
  hc_pre_backward_ref(p.X.data(), p.raw.data(), rho.data(), mix.data(), pre.data(), p.dy.data(), p.dpost.data(),
                      p.dA.data(), N, n, d, p.base.data(), p.scale.data(), p.heps, rdz.data(), rdraw.data(),
                      rcoef.data(), rdX.data(), rgbase.data(), rgsc.data());
  const double dscale = std::sqrt(double(d));  // dpre = gy · X_k: d terms of O(1)
  expect_close("dz", dz, rdz, kTol, dscale);
  expect_close("draw", draw, rdraw, kTol, dscale);
  expect_close("coef", coef, rcoef, kTol, dscale / double(nd));
  expect_close("dX", dX, rdX, kTol, dscale);
  expect_close("gbase", gbase, rgbase, kTol, dscale * double(N));
  expect_close("gsc", gsc, rgsc, kTol, dscale * double(N * nout));
}

void check_post(uint64_t seed, int64_t N, int n, int64_t d) {
  SCOPED_TRACE(testing::Message() << "post N " << N << " n " << n << " d " << d);
  HcProblem<float> p(seed, N, n, d, false);
  std::vector<float> Xout(size_t(N * n * d)), rXout(Xout.size());
  hc_post_forward(p.F.data(), p.X.data(), p.post.data(), p.M.data(), N, n, d, Xout.data());
  hc_post_forward_ref(p.F.data(), p.X.data(), p.post.data(), p.M.data(), N, n, d, rXout.data());
  expect_close("Xout", Xout, rXout, kTol);
  std::vector<float> dF(size_t(N * d)), dpost(size_t(N * n)), dM(size_t(N * n * n)), dX = p.dX0;
  std::vector<float> rdF(dF.size()), rdpost(dpost.size()), rdM(dM.size()), rdX = p.dX0;
  hc_post_backward(p.F.data(), p.X.data(), p.post.data(), p.M.data(), p.dXout.data(), N, n, d, dF.data(), dpost.data(),
                   dM.data(), dX.data());
  hc_post_backward_ref(p.F.data(), p.X.data(), p.post.data(), p.M.data(), p.dXout.data(), N, n, d, rdF.data(),
                       rdpost.data(), rdM.data(), rdX.data());
  expect_close("dF", dF, rdF, kTol);
  expect_close("dpost", dpost, rdpost, kTol, std::sqrt(double(d)));
  expect_close("dM", dM, rdM, kTol, std::sqrt(double(d)));
  expect_close("dX", dX, rdX, kTol);
}

void check_head(uint64_t seed, int64_t N, int n, int64_t d) {
  SCOPED_TRACE(testing::Message() << "head N " << N << " n " << n << " d " << d);
  HcProblem<float> p(seed, N, n, d, true);
  const int64_t nd = n * d;
  const float heps = float(p.heps);
  std::vector<float> rho(static_cast<size_t>(N)), mix(size_t(N * n)), rmix(mix.size()), pre(mix.size()), rpre(mix.size());
  std::vector<float> h(size_t(N * d)), rh(h.size());
  hc_mix_rho(p.X.data(), N, nd, float(p.eps), rho.data(), nullptr);
  hc_mix_scale(p.raw.data(), rho.data(), N, n, mix.data());
  hc_head_forward(p.X.data(), mix.data(), N, n, d, p.base.data(), p.scale.data(), heps, pre.data(), h.data());
  hc_head_forward_ref(p.X.data(), p.raw.data(), rho.data(), N, n, d, p.base.data(), p.scale.data(), p.heps,
                      rmix.data(), rpre.data(), rh.data());
  expect_close("mix", mix, rmix, kTol, 0.0);
  expect_close("pre", pre, rpre, kTol);
  expect_close("h", h, rh, kTol);
  std::vector<float> dz(size_t(N * n)), dmix(dz.size()), draw(dz.size()), coef(static_cast<size_t>(N)), dX = p.dX0;
  std::vector<float> gbase(size_t(n), 0.25f), gsc(1, -0.5f);
  hc_head_backward_gates(p.X.data(), pre.data(), p.dy.data(), N, n, d, p.scale.data(), heps, dz.data(), dmix.data(),
                         dX.data());
  hc_gate_param_grads(dz.data(), mix.data(), N, n, n, gbase.data(), gsc.data());
  hc_mix_backward_coef(dmix.data(), p.raw.data(), rho.data(), N, n, nd, draw.data(), coef.data());
  hc_mix_backward_add_rows(coef.data(), p.X.data(), N, nd, dX.data());
  std::vector<float> rdz(dz.size()), rdraw(dz.size()), rcoef(static_cast<size_t>(N)), rdX = p.dX0;
  std::vector<float> rgbase(size_t(n), 0.25f), rgsc(1, -0.5f);
  hc_head_backward_ref(p.X.data(), p.raw.data(), rho.data(), mix.data(), pre.data(), p.dy.data(), N, n, d,
                       p.scale.data(), p.heps, rdz.data(), rdraw.data(), rcoef.data(), rdX.data(), rgbase.data(),
                       rgsc.data());
  const double dscale = std::sqrt(double(d));
  expect_close("dz", dz, rdz, kTol, dscale);
  expect_close("draw", draw, rdraw, kTol, dscale);
  expect_close("coef", coef, rcoef, kTol, dscale / double(nd));
  expect_close("dX", dX, rdX, kTol, dscale);
  expect_close("gbase", gbase, rgbase, kTol, dscale * double(N));
  expect_close("gsc", gsc, rgsc, kTol, dscale * double(N * n));
}

TEST(Hc, FastPathMatchesReferencePre) {
  check_pre(1, 9, 4, 67);
  check_pre(2, 5, 2, 33);
  check_pre(3, 7, 8, 20);
  check_pre(4, 3, 4, 1001);
}

TEST(Hc, FastPathMatchesReferencePost) {
  check_post(5, 9, 4, 67);
  check_post(6, 4, 2, 33);
  check_post(7, 3, 8, 129);
}

TEST(Hc, FastPathMatchesReferenceHead) {
  check_head(8, 9, 4, 67);
  check_head(9, 5, 2, 33);
  check_head(10, 3, 8, 513);
}

// ------------------------------------------------------------------ references vs central differences
// Central differences of loss(v) = Σ w · outputs in double, at a sample of entries of v, against grad.
void expect_fd(const char* what, std::vector<double>& v, const std::vector<double>& grad,
               const std::function<double()>& loss, size_t stride = 1) {
  constexpr double h = 1e-5;
  ASSERT_EQ(v.size(), grad.size()) << what;
  for (size_t i = 0; i < v.size(); i += stride) {
    const double keep = v[i];
    v[i] = keep + h;
    const double lp = loss();
    v[i] = keep - h;
    const double lm = loss();
    v[i] = keep;
    const double fd = (lp - lm) / (2 * h);
    EXPECT_NEAR(grad[i], fd, 1e-6 * (1 + std::fabs(fd))) << what << "[" << i << "]";
  }
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

TEST(Hc, PreReferenceBackwardMatchesCentralDifferences) {
  for (int n : {4, 2}) {
    SCOPED_TRACE(n);
    HcProblem<double> p(20 + uint64_t(n), 3, n, 7, false);
    const int64_t N = p.N, d = p.d, nd = n * d;
    const int nout = p.nout;
    std::vector<double> rho(static_cast<size_t>(N)), mix(size_t(N * nout)), pre(size_t(N * n)), post(pre.size()),
        A(size_t(N * n * n)), y(size_t(N * d));
    // loss = dy · y + dpost · post + dA · A, with rho a function of X (the mix scaling inside the gates)
    auto forward = [&] {
      hc_mix_rho_ref(p.X.data(), N, nd, p.eps, rho.data());
      hc_pre_forward_ref(p.X.data(), p.raw.data(), rho.data(), N, n, d, p.base.data(), p.scale.data(), p.heps,
                         mix.data(), pre.data(), post.data(), A.data(), y.data());
    };
    auto loss = [&] {
      forward();
      return dot(p.dy, y) + dot(p.dpost, post) + dot(p.dA, A);
    };
    forward();
    std::vector<double> dz(size_t(N * nout)), draw(dz.size()), coef(static_cast<size_t>(N)), dX(p.X.size(), 0.0),
        gbase(size_t(nout), 0.0), gsc(3, 0.0);
    hc_pre_backward_ref(p.X.data(), p.raw.data(), rho.data(), mix.data(), pre.data(), p.dy.data(), p.dpost.data(),
                        p.dA.data(), N, n, d, p.base.data(), p.scale.data(), p.heps, dz.data(), draw.data(),
                        coef.data(), dX.data(), gbase.data(), gsc.data());
    expect_fd("dX", p.X, dX, loss);
    expect_fd("draw", p.raw, draw, loss);
    expect_fd("gbase", p.base, gbase, loss);
    expect_fd("gsc", p.scale, gsc, loss);
  }
}

TEST(Hc, PostReferenceBackwardMatchesCentralDifferences) {
  for (int n : {4, 3}) {
    SCOPED_TRACE(n);
    HcProblem<double> p(30 + uint64_t(n), 3, n, 5, false);
    const int64_t N = p.N, d = p.d;
    std::vector<double> Xout(p.X.size());
    auto loss = [&] {
      hc_post_forward_ref(p.F.data(), p.X.data(), p.post.data(), p.M.data(), N, n, d, Xout.data());
      return dot(p.dXout, Xout);
    };
    std::vector<double> dF(p.F.size()), dpost(p.post.size()), dM(p.M.size()), dX(p.X.size(), 0.0);
    hc_post_backward_ref(p.F.data(), p.X.data(), p.post.data(), p.M.data(), p.dXout.data(), N, n, d, dF.data(),
                         dpost.data(), dM.data(), dX.data());
    expect_fd("dF", p.F, dF, loss);
    expect_fd("dX", p.X, dX, loss);
    expect_fd("dpost", p.post, dpost, loss);
    expect_fd("dM", p.M, dM, loss);
  }
}

TEST(Hc, HeadReferenceBackwardMatchesCentralDifferences) {
  for (int n : {4, 8}) {
    SCOPED_TRACE(n);
    HcProblem<double> p(40 + uint64_t(n), 3, n, 6, true);
    const int64_t N = p.N, d = p.d, nd = n * d;
    std::vector<double> rho(static_cast<size_t>(N)), mix(size_t(N * n)), pre(mix.size()), h(size_t(N * d));
    auto forward = [&] {
      hc_mix_rho_ref(p.X.data(), N, nd, p.eps, rho.data());
      hc_head_forward_ref(p.X.data(), p.raw.data(), rho.data(), N, n, d, p.base.data(), p.scale.data(), p.heps,
                          mix.data(), pre.data(), h.data());
    };
    auto loss = [&] {
      forward();
      return dot(p.dy, h);
    };
    forward();
    std::vector<double> dz(size_t(N * n)), draw(dz.size()), coef(static_cast<size_t>(N)), dX(p.X.size(), 0.0),
        gbase(size_t(n), 0.0), gsc(1, 0.0);
    hc_head_backward_ref(p.X.data(), p.raw.data(), rho.data(), mix.data(), pre.data(), p.dy.data(), N, n, d,
                         p.scale.data(), p.heps, dz.data(), draw.data(), coef.data(), dX.data(), gbase.data(),
                         gsc.data());
    expect_fd("dX", p.X, dX, loss);
    expect_fd("draw", p.raw, draw, loss);
    expect_fd("gbase", p.base, gbase, loss);
    expect_fd("gsc", p.scale, gsc, loss);
  }
}

// ------------------------------------------------------------------ the device's token order
struct Sums {
  std::vector<float> base, sc;
};
Sums chunked(const std::vector<float>& dz, const std::vector<float>& mix, int64_t N, int n, int nout) {
  Sums s{std::vector<float>(size_t(nout), 0.125f), std::vector<float>(nout == n ? 1 : 3, -2.0f)};
  hc_gate_param_grads_chunked(dz.data(), mix.data(), N, n, nout, s.base.data(), s.sc.data());
  return s;
}
// The largest |got - exact| / bound over gbase and gsc.
double worst_ratio(const Sums& got, const HcGateSums& want) {
  double w = 0;
  for (size_t k = 0; k < got.base.size(); ++k)
    w = std::max(w, std::fabs(double(got.base[k]) - want.base[k]) / want.base_bound[k]);
  for (size_t j = 0; j < got.sc.size(); ++j)
    w = std::max(w, std::fabs(double(got.sc[j]) - want.sc[j]) / want.sc_bound[j]);
  return w;
}

TEST(Hc, DeviceTokenOrderStaysWithinTheGpuBound) {
  struct Case {
    int64_t N;
    int n, nout;
  };
  for (const Case c : {Case{8191, 4, 24}, Case{8192, 4, 4}, Case{1001, 8, 80}, Case{63, 2, 8}, Case{65, 4, 24}}) {
    SCOPED_TRACE(testing::Message() << "N " << c.N << " n " << c.n << " nout " << c.nout);
    trex::Rng r(uint64_t(c.N * 7 + c.nout));
    // dz of both signs and a spread of magnitudes (some logits' gradients much larger than others)
    std::vector<float> dz = randn<float>(r, size_t(c.N * c.nout), 1.0, 0.3), mix = randn<float>(r, dz.size(), 2.0);
    for (size_t i = 0; i < dz.size(); i += 7) dz[i] *= 50.0f;
    const std::vector<float> g0(size_t(c.nout), 0.125f), s0(c.nout == c.n ? 1 : 3, -2.0f);
    const HcGateSums want = hc_gate_param_sums(dz.data(), mix.data(), c.N, c.n, c.nout, g0.data(), s0.data());
    const Sums got = chunked(dz, mix, c.N, c.n, c.nout);
    const double ratio = worst_ratio(got, want);
    EXPECT_LE(ratio, 1.0);
    RecordProperty("worst_ratio_N" + std::to_string(c.N) + "_nout" + std::to_string(c.nout), std::to_string(ratio));

    // a wrong recipe: the last token of the first chunk skipped, as an off-by-one chunk end would
    if (c.N > kHcGradChunk) {
      std::vector<float> skipped = dz;
      const int64_t t = kHcGradChunk - 1;
      bool visible = false;  // the drawn values must make the skip detectable: some |dz| past its bound
      for (int k = 0; k < c.nout; ++k) visible |= std::fabs(dz[size_t(t * c.nout + k)]) > 2 * want.base_bound[size_t(k)];
      ASSERT_TRUE(visible);
      for (int k = 0; k < c.nout; ++k) skipped[size_t(t * c.nout + k)] = 0.0f;
      EXPECT_GT(worst_ratio(chunked(skipped, mix, c.N, c.n, c.nout), want), 1.0) << "a skipped token";
    }
    // a perturbed value: one result moved by 1.5 bounds
    Sums moved = got;
    moved.sc[0] = float(want.sc[0] + 1.5 * want.sc_bound[0]);
    EXPECT_GT(worst_ratio(moved, want), 1.0) << "a perturbed gsc";
    moved = got;
    moved.base[size_t(c.nout - 1)] = float(want.base[size_t(c.nout - 1)] - 1.5 * want.base_bound[size_t(c.nout - 1)]);
    EXPECT_GT(worst_ratio(moved, want), 1.0) << "a perturbed gbase";
  }
}

}  // namespace
