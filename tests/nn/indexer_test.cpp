// The lightning indexer's scores and KL loss (nn/indexer.hpp): the fast path against the double reference (scores,
// loss, dqI, dlam, dK; 1 and 3 threads), the reference's gradients against central differences of its loss (qI,
// lam, K; the main q / Ce side is detached), the dense warm-up's lists, rows with no visible entry.
#include "nn/indexer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "util/rng.hpp"
#include "float_vectors.hpp"

using trex::nn::Indexer;
using trex::nn::IndexerKL;

namespace {

// A packed batch: documents of the given lengths, compressed entries of ratio 4 restarting at each document
// (query at document position p sees floor((p + 1) / 4) entries, its document's first at base), as
// model::detail::Seq::build lays them out.
struct IndexerProblem {
  int64_t N = 0, HI = 0, cI = 0, NE = 0, smax = 1, H = 0, hd = 0;
  std::vector<int32_t> nvis, base;
  std::vector<float> qI, lam, K, q, Ce;
  Indexer ix() const {
    Indexer x;
    x.N = N, x.HI = HI, x.cI = cI, x.NE = NE, x.smax = smax;
    x.nvis = nvis.data(), x.base = base.data(), x.qI = qI.data(), x.lam = lam.data(), x.K = K.data();
    return x;
  }
};

using trex::testing::randn;

IndexerProblem make_problem(uint64_t seed, const std::vector<int64_t>& doc_lens, int64_t HI, int64_t cI, int64_t H,
                     int64_t hd) {
  trex::Rng rng(seed);
  IndexerProblem p;
  p.HI = HI, p.cI = cI, p.H = H, p.hd = hd;
  for (int64_t len : doc_lens) {
    for (int64_t t = 0; t < len; ++t) {
      p.base.push_back(int32_t(p.NE));
      p.nvis.push_back(int32_t((t + 1) / 4));
    }
    p.NE += len / 4;
  }
  p.N = int64_t(p.nvis.size());
  p.smax = std::max<int64_t>(1, *std::max_element(p.nvis.begin(), p.nvis.end()));
  p.qI = randn(rng, size_t(p.N * HI * cI), 1.0 / std::sqrt(double(cI)));
  p.lam = randn(rng, size_t(p.N * HI), 1.0);
  p.K = randn(rng, size_t(std::max<int64_t>(1, p.NE * cI)), 1.0);
  p.q = randn(rng, size_t(p.N * H * hd), 1.0);
  p.Ce = randn(rng, size_t(std::max<int64_t>(1, p.NE * hd)), 1.0);
  return p;
}

// The scores' float rounding: each dot of cI products (accumulators of at most cI terms) and the HI-term head sum,
// bounded by (cI + HI + 2) u times the sum of the terms' magnitudes (u = 2^-24), the magnitudes in double.
double score_bound(const IndexerProblem& p, int64_t i, int64_t e) {
  double mag = 0;
  for (int64_t h = 0; h < p.HI; ++h) {
    double m = 0;
    for (int64_t t = 0; t < p.cI; ++t)
      m += std::fabs(double(p.qI[size_t((i * p.HI + h) * p.cI + t)]) * double(p.K[size_t((p.base[size_t(i)] + e) * p.cI + t)]));
    mag += std::fabs(double(p.lam[size_t(i * p.HI + h)])) * m;
  }
  return double(p.cI + p.HI + 2) * 0x1.0p-24 * mag + 1e-30;
}

using trex::testing::max_abs;

struct Fast {
  std::vector<float> scores, dqI, dlam, dK;
  std::vector<int32_t> sel;
  double loss = 0;
};

// The fast path as the model runs it: scores, then (top-k or dense) lists, then the KL.
Fast run_fast(const IndexerProblem& p, int64_t topk, bool dense, double coeff, int nthreads) {
  trex::nn::Arena arena;
  const Indexer ix = p.ix();
  Fast f;
  f.scores.assign(size_t(p.N * p.smax), std::nanf(""));
  trex::nn::indexer_scores(ix, f.scores.data());
  const int64_t kstride = dense ? p.smax : topk;
  f.sel.assign(size_t(p.N * kstride), -7);
  if (dense)
    trex::nn::indexer_dense_sel(ix, f.sel.data());
  else
    trex::nn::indexer_select(ix, f.scores.data(), topk, f.sel.data());
  IndexerKL kl;
  kl.H = p.H, kl.hd = p.hd, kl.q = p.q.data(), kl.Ce = p.Ce.data(), kl.sel = f.sel.data(), kl.kstride = kstride;
  kl.coeff = coeff;
  f.dqI.assign(size_t(p.N * p.HI * p.cI), std::nanf(""));
  f.dlam.assign(size_t(p.N * p.HI), std::nanf(""));
  float* dK = nullptr;
  f.loss = trex::nn::indexer_kl(ix, kl, f.scores.data(), f.dqI.data(), f.dlam.data(), &dK, arena, nthreads);
  f.dK.assign(dK, dK + std::max<int64_t>(1, p.NE * p.cI));
  return f;
}

IndexerKL kl_args(const IndexerProblem& p, const std::vector<int32_t>& sel, int64_t kstride, double coeff) {
  IndexerKL kl;
  kl.H = p.H, kl.hd = p.hd, kl.q = p.q.data(), kl.Ce = p.Ce.data(), kl.sel = sel.data(), kl.kstride = kstride;
  kl.coeff = coeff;
  return kl;
}

// Fast path vs the reference on the fast path's own lists. Bounds: the scores per element (score_bound); the loss
// relatively 1e-5 (float softmaxes of at most smax terms with relative error ~ smax u ~ 1e-6 at these sizes, the
// KL sum in double); each gradient 2e-4 of its largest magnitude (its float terms are products of those softmaxes
// with float dots, accumulated over at most topk entries and HI heads, ~ (smax + cI + topk) u relative).
void check_fast_vs_ref(const IndexerProblem& p, int64_t topk, bool dense, int nthreads) {
  const double coeff = 0.37;
  const Fast f = run_fast(p, topk, dense, coeff, nthreads);
  std::vector<float> ref_scores(size_t(p.N * p.smax), std::nanf(""));
  trex::nn::indexer_scores_ref(p.ix(), ref_scores.data());
  for (int64_t i = 0; i < p.N; ++i)
    for (int64_t e = 0; e < p.nvis[size_t(i)]; ++e)
      ASSERT_NEAR(f.scores[size_t(i * p.smax + e)], ref_scores[size_t(i * p.smax + e)], score_bound(p, i, e))
          << "query " << i << " entry " << e;
  const int64_t kstride = dense ? p.smax : topk;
  for (int64_t i = 0; i < p.N; ++i) {  // the lists: in range of the query's entries, -1 after min(kstride, nvis)
    const int64_t kt = std::min<int64_t>(kstride, p.nvis[size_t(i)]);
    for (int64_t j = 0; j < kstride; ++j) {
      const int32_t e = f.sel[size_t(i * kstride + j)];
      if (j < kt) {
        ASSERT_GE(e, p.base[size_t(i)]);
        ASSERT_LT(e, p.base[size_t(i)] + p.nvis[size_t(i)]);
      } else {
        ASSERT_EQ(e, -1);
      }
    }
  }
  std::vector<float> dqI(f.dqI.size(), std::nanf("")), dlam(f.dlam.size(), std::nanf("")),
      dK(f.dK.size(), std::nanf(""));
  const double loss = trex::nn::indexer_kl_ref(p.ix(), kl_args(p, f.sel, kstride, coeff), dqI.data(), dlam.data(),
                                               p.NE > 0 ? dK.data() : nullptr);
  EXPECT_GT(loss, 0);
  EXPECT_NEAR(f.loss, loss, 1e-5 * std::fabs(loss) + 1e-12);
  auto cmp = [](const std::vector<float>& a, const std::vector<float>& r, size_t n, const char* what) {
    double scale = 0;
    for (size_t j = 0; j < n; ++j) scale = std::max(scale, double(std::fabs(r[j])));
    ASSERT_GT(scale, 0) << what;
    for (size_t j = 0; j < n; ++j) ASSERT_NEAR(a[j], r[j], 2e-4 * scale) << what << " " << j;
  };
  cmp(f.dqI, dqI, dqI.size(), "dqI");
  cmp(f.dlam, dlam, dlam.size(), "dlam");
  if (p.NE > 0) cmp(f.dK, dK, size_t(p.NE * p.cI), "dK");
  // Rows with no visible entry: no gradient, no loss (checked through the gradients: the reference sums only the
  // rows with entries).
  for (int64_t i = 0; i < p.N; ++i) {
    if (p.nvis[size_t(i)] != 0) continue;
    for (int64_t t = 0; t < p.HI * p.cI; ++t) ASSERT_EQ(f.dqI[size_t(i * p.HI * p.cI + t)], 0.0f);
    for (int64_t h = 0; h < p.HI; ++h) ASSERT_EQ(f.dlam[size_t(i * p.HI + h)], 0.0f);
  }
}

TEST(Indexer, FastMatchesReferenceTopk) {
  // topk 5 below most rows' nvis (up to 12), and 20 above every row's
  const IndexerProblem p = make_problem(11, {3, 49, 17, 30}, 4, 16, 3, 16);
  for (int nt : {1, 3}) {
    check_fast_vs_ref(p, 5, false, nt);
    check_fast_vs_ref(p, 20, false, nt);
  }
}

TEST(Indexer, FastMatchesReferenceDense) {
  const IndexerProblem p = make_problem(12, {40, 2, 25}, 3, 24, 2, 32);
  for (int nt : {1, 3}) check_fast_vs_ref(p, 0, true, nt);
}

TEST(Indexer, SameBitsForSameThreadCount) {
  const IndexerProblem p = make_problem(13, {37, 28}, 4, 16, 2, 16);
  const Fast a = run_fast(p, 4, false, 0.5, 3), b = run_fast(p, 4, false, 0.5, 3);
  EXPECT_EQ(std::memcmp(a.dK.data(), b.dK.data(), a.dK.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(a.dqI.data(), b.dqI.data(), a.dqI.size() * sizeof(float)), 0);
  EXPECT_EQ(a.loss, b.loss);
  // the per-query values do not depend on the team: scores and lists are the same with one thread
  const Fast c = run_fast(p, 4, false, 0.5, 1);
  EXPECT_EQ(std::memcmp(a.scores.data(), c.scores.data(), a.scores.size() * sizeof(float)), 0);
  EXPECT_EQ(a.sel, c.sel);
  EXPECT_EQ(std::memcmp(a.dqI.data(), c.dqI.data(), a.dqI.size() * sizeof(float)), 0);
}

TEST(Indexer, AllRowsEmpty) {
  // documents shorter than the ratio: no entries at all, no loss, zero gradients
  const IndexerProblem p = make_problem(14, {3, 2, 1}, 2, 16, 2, 16);
  ASSERT_EQ(p.NE, 0);
  const Fast f = run_fast(p, 4, false, 1.0, 3);
  EXPECT_EQ(f.loss, 0.0);
  EXPECT_EQ(max_abs(f.dqI), 0.0);
  EXPECT_EQ(max_abs(f.dlam), 0.0);
  for (int32_t e : f.sel) EXPECT_EQ(e, -1);
  const double r = trex::nn::indexer_kl_ref(p.ix(), kl_args(p, f.sel, 4, 1.0), nullptr, nullptr, nullptr);
  EXPECT_EQ(r, 0.0);
}

// The reference's gradients against central differences of its own loss, the lists held fixed (the top-k of the
// unperturbed scores). Step 1e-3 on O(1) inputs: truncation ~ h^2 |L'''| ~ 1e-6, the loss in double; a ReLU kink
// crossed by a step would show as a mismatch of O(|dI| |k| ) — none at this seed (a wrong gradient, e.g. a dead
// head's term kept, fails by O(1)).
TEST(Indexer, ReferenceGradientsMatchCentralDifferences) {
  IndexerProblem p = make_problem(15, {22, 13}, 3, 8, 2, 8);
  const int64_t topk = 3;
  const Fast f = run_fast(p, topk, false, 1.0, 1);
  const std::vector<int32_t> sel = f.sel;
  std::vector<float> dqI(p.qI.size()), dlam(p.lam.size()), dK(p.K.size());
  trex::nn::indexer_kl_ref(p.ix(), kl_args(p, sel, topk, 1.0), dqI.data(), dlam.data(), dK.data());
  ASSERT_GT(max_abs(dqI), 1e-3);
  ASSERT_GT(max_abs(dlam), 1e-3);
  ASSERT_GT(max_abs(dK), 1e-3);
  auto check = [&](std::vector<float>& x, const std::vector<float>& g, const char* what) {
    int checked = 0;
    for (size_t j = 0; j < x.size(); ++j) {
      const float x0 = x[j];
      x[j] = x0 + 1e-3f;
      const float xp = x[j];
      const double lp = trex::nn::indexer_kl_ref(p.ix(), kl_args(p, sel, topk, 1.0), nullptr, nullptr, nullptr);
      x[j] = x0 - 1e-3f;
      const float xm = x[j];
      const double lm = trex::nn::indexer_kl_ref(p.ix(), kl_args(p, sel, topk, 1.0), nullptr, nullptr, nullptr);
      x[j] = x0;
      const double fd = (lp - lm) / (double(xp) - double(xm));
      ASSERT_NEAR(g[j], fd, 2e-4 + 1e-3 * std::fabs(fd)) << what << " " << j;
      if (g[j] != 0) ++checked;
    }
    EXPECT_GT(checked, 0) << what;
  };
  check(p.qI, dqI, "qI");
  check(p.lam, dlam, "lam");
  check(p.K, dK, "K");
}

// The ReLU-dead heads get no gradient: head 1's qI = 0 gives qk = 0 (the ReLU's flat side, qk <= 0) on every
// entry, so its dlam and dqI are 0 in both paths while head 0's are not.
TEST(Indexer, DeadHeadsGetNoGradient) {
  IndexerProblem p = make_problem(16, {24}, 2, 8, 2, 8);
  for (int64_t i = 0; i < p.N; ++i)
    for (int64_t t = 0; t < p.cI; ++t) p.qI[size_t((i * p.HI + 1) * p.cI + t)] = 0;
  const Fast f = run_fast(p, 3, false, 1.0, 3);
  std::vector<float> dqI(p.qI.size()), dlam(p.lam.size());
  trex::nn::indexer_kl_ref(p.ix(), kl_args(p, f.sel, 3, 1.0), dqI.data(), dlam.data(), nullptr);
  for (int64_t i = 0; i < p.N; ++i) {
    EXPECT_EQ(f.dlam[size_t(i * p.HI + 1)], 0.0f);
    EXPECT_EQ(dlam[size_t(i * p.HI + 1)], 0.0f);
    for (int64_t t = 0; t < p.cI; ++t) EXPECT_EQ(dqI[size_t((i * p.HI + 1) * p.cI + t)], 0.0f);
  }
  EXPECT_GT(max_abs(dlam), 0);
}

}  // namespace
