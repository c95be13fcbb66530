// mHC: the fused kernels (mhc.cpp) against the readable double-precision reference, and their backward against
// central finite differences through the reference (pre gate, post gate, Sinkhorn comb, mix, RMS factor).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/mhc_reference.hpp"
#include "model/model_impl.hpp"
#include "util/rng.hpp"

using namespace trex::model;
using namespace trex::model::detail;

namespace {
struct HcFixture {
  ModelConfig cfg = ModelConfig::preset("tiny");
  int64_t n = 4, d = 16, N = 5, nout = 24;
  std::vector<float> P, G, X, F;
  trex::nn::Arena arena;
  trex::nn::RopeTable rope;
  HcOff off{0, 24 * 64, 24 * 64 + 24};
  HcFixture() {
    cfg.hidden_size = d;
    trex::Rng r(9);
    P.resize(size_t(24 * 64 + 24 + 3));
    for (auto& v : P) v = float(0.3 * r.normal());
    P[size_t(off.scale)] = 0.8f;
    P[size_t(off.scale + 1)] = 1.1f;
    P[size_t(off.scale + 2)] = 0.9f;
    G.assign(P.size(), 0.0f);
    X.resize(size_t(N * n * d));
    for (auto& v : X) v = float(r.normal());
    F.resize(size_t(N * d));
    for (auto& v : F) v = float(r.normal());
  }
  Ctx ctx() { return Ctx{cfg, P.data(), G.data(), arena, single_process_group(), true, 1, rope, rope}; }
  // loss = sum(gy*y) + sum(gX*Xout) of (pre -> y; post/M -> Xout = hc_post(F, X)), via the reference
  double ref_loss(const std::vector<float>& gy, const std::vector<float>& gX) {
    double L = 0;
    std::vector<double> y(static_cast<size_t>(d)), pre(static_cast<size_t>(n)), post(static_cast<size_t>(n)), M(static_cast<size_t>(n * n)), xo(static_cast<size_t>(n * d));
    for (int64_t t = 0; t < N; ++t) {
      hc_pre_reference(n, d, 20, cfg.rms_norm_eps, cfg.hc_eps, X.data() + t * n * d, P.data() + off.fn,
                       P.data() + off.base, P.data() + off.scale, y.data(), pre.data(), post.data(), M.data());
      hc_post_reference(n, d, F.data() + t * d, X.data() + t * n * d, post.data(), M.data(), xo.data());
      for (int64_t i = 0; i < d; ++i) L += gy[size_t(t * d + i)] * y[size_t(i)];
      for (int64_t i = 0; i < n * d; ++i) L += gX[size_t(t * n * d + i)] * xo[size_t(i)];
    }
    return L;
  }
};
}  // namespace

TEST(Mhc, FusedMatchesReference) {
  HcFixture s;
  Ctx c = s.ctx();
  HcSaved hs;
  std::vector<float> y(size_t(s.N * s.d)), xo(size_t(s.N * s.n * s.d));
  hc_pre_forward(c, s.X.data(), s.N, s.off, hs, y.data());
  hc_post_forward(c, s.F.data(), s.X.data(), hs, s.N, xo.data());
  std::vector<double> ry(size_t(s.d)), pre(4), post(4), M(16), rxo(size_t(s.n * s.d));
  for (int64_t t = 0; t < s.N; ++t) {
    hc_pre_reference(s.n, s.d, 20, s.cfg.rms_norm_eps, s.cfg.hc_eps, s.X.data() + t * s.n * s.d, s.P.data(),
                     s.P.data() + s.off.base, s.P.data() + s.off.scale, ry.data(), pre.data(), post.data(), M.data());
    hc_post_reference(s.n, s.d, s.F.data() + t * s.d, s.X.data() + t * s.n * s.d, post.data(), M.data(), rxo.data());
    for (int64_t i = 0; i < s.d; ++i) ASSERT_NEAR(y[size_t(t * s.d + i)], ry[size_t(i)], 1e-5);
    for (int k = 0; k < 16; ++k) ASSERT_NEAR(hs.M[t * 16 + k], M[size_t(k)], 1e-5);
    for (int64_t i = 0; i < s.n * s.d; ++i) ASSERT_NEAR(xo[size_t(t * s.n * s.d + i)], rxo[size_t(i)], 1e-5);
  }
}

TEST(Mhc, BackwardMatchesFiniteDifferences) {
  HcFixture s;
  Ctx c = s.ctx();
  trex::Rng r(10);
  std::vector<float> gy(size_t(s.N * s.d)), gX(size_t(s.N * s.n * s.d));
  for (auto& v : gy) v = float(r.normal());
  for (auto& v : gX) v = float(r.normal());
  HcSaved hs;
  std::vector<float> y(size_t(s.N * s.d)), xo(size_t(s.N * s.n * s.d));
  hc_pre_forward(c, s.X.data(), s.N, s.off, hs, y.data());
  hc_post_forward(c, s.F.data(), s.X.data(), hs, s.N, xo.data());
  std::vector<float> dX(size_t(s.N * s.n * s.d), 0.0f), dF(size_t(s.N * s.d)), dpost(size_t(s.N * 4)),
      dM(size_t(s.N * 16));
  hc_post_backward(c, s.F.data(), s.X.data(), hs, s.N, gX.data(), dF.data(), dpost.data(), dM.data(), dX.data());
  hc_pre_backward(c, s.N, s.off, hs, gy.data(), dpost.data(), dM.data(), dX.data());
  auto fd = [&](std::vector<float>& v, size_t i) {
    const float keep = v[i], eps = 1e-2f;
    v[i] = keep + eps;
    const double lp = s.ref_loss(gy, gX);
    v[i] = keep - eps;
    const double lm = s.ref_loss(gy, gX);
    v[i] = keep;
    return (lp - lm) / (2.0 * double(eps));
  };
  for (size_t i = 0; i < s.X.size(); i += 7) EXPECT_NEAR(fd(s.X, i), dX[i], 2e-3 + 2e-3 * std::fabs(dX[i])) << "X " << i;
  for (size_t i = 0; i < s.F.size(); i += 3) EXPECT_NEAR(fd(s.F, i), dF[i], 2e-3) << "F " << i;
  for (size_t i = 0; i < s.P.size(); i += (i < size_t(s.off.base) ? 37 : 1))
    EXPECT_NEAR(fd(s.P, i), s.G[i], 2e-3 + 2e-3 * std::fabs(s.G[i])) << "param " << i;
}
