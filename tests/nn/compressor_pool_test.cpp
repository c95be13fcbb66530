// The compressor's pooling (nn/compressor_pool.hpp): the fast path (what the model runs) against the double
// reference, forward and backward; the reference backward against central differences of its forward (dCx, dZx,
// and gape through the ape add); a CSA document's block 0 without previous slots; the entry grid restarting at each
// document (an entry's values do not depend on the other documents); what no entry reads left alone.
#include "nn/compressor_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "util/rng.hpp"
#include "float_vectors.hpp"

using trex::nn::CompressorPool;

namespace {

using trex::testing::randn;

// A packed batch for ratio m: documents at doc_starts, pos restarting at each, the entry grid as the model's
// detail::Seq::build makes it (blocks of m tokens from each document's start, complete ones only).
struct PoolProblem {
  int64_t N = 0, m = 0, cdim = 0;
  bool overlap = false;
  std::vector<int32_t> pos, start, idx;
  std::vector<float> Cx, Zx, ape, dpooled, gape0;
  CompressorPool args() const {
    CompressorPool p;
    p.N = N, p.NE = int64_t(start.size()), p.m = m, p.cdim = cdim, p.overlap = overlap;
    p.start = start.data(), p.idx = idx.data(), p.pos = pos.data();
    return p;
  }
  int64_t W() const { return (overlap ? 2 : 1) * cdim; }
  int64_t NE() const { return int64_t(start.size()); }
  int64_t slots() const { return overlap ? 2 * m : m; }
};

PoolProblem make_problem(uint64_t seed, int64_t N, int64_t m, int64_t cdim, bool overlap, std::vector<int64_t> docs) {
  trex::Rng rng(seed);
  PoolProblem p;
  p.N = N, p.m = m, p.cdim = cdim, p.overlap = overlap;
  docs.push_back(N);
  for (size_t d = 0; d + 1 < docs.size(); ++d) {
    for (int64_t i = docs[d]; i < docs[d + 1]; ++i) p.pos.push_back(int32_t(i - docs[d]));
    for (int64_t blk = 0; blk < (docs[d + 1] - docs[d]) / m; ++blk) {
      p.start.push_back(int32_t(docs[d] + blk * m));
      p.idx.push_back(int32_t(blk));
    }
  }
  p.Cx = randn(rng, size_t(N * p.W()));
  p.Zx = randn(rng, size_t(N * p.W()), 1.5);
  p.ape = randn(rng, size_t(m * p.W()), 0.5);
  p.dpooled = randn(rng, size_t(std::max<int64_t>(1, p.NE() * cdim)));
  p.gape0 = randn(rng, size_t(m * p.W()));
  return p;
}

using trex::testing::max_abs;

// The shapes every test runs: HCA and CSA, m 4 and 8, documents whose lengths are not multiples of m, one shorter
// than a block, trailing tokens in no entry.
struct Shape {
  int64_t N, m, cdim;
  bool overlap;
  std::vector<int64_t> docs;
};
const std::vector<Shape>& shapes() {
  static const std::vector<Shape> s{{37, 4, 8, false, {0, 13, 15}}, {37, 4, 8, true, {0, 13, 15}},
                                    {53, 8, 5, false, {0, 2, 27}},  {53, 8, 5, true, {0, 2, 27}},
                                    {64, 4, 16, true, {0}},         {70, 8, 16, false, {0, 33}}};
  return s;
}

}  // namespace

TEST(CompressorPool, FastPathMatchesTheReference) {
  uint64_t seed = 1;
  for (const Shape& sh : shapes()) {
    const PoolProblem pb = make_problem(seed++, sh.N, sh.m, sh.cdim, sh.overlap, sh.docs);
    const CompressorPool p = pb.args();
    const int64_t NE = pb.NE(), W = pb.W(), nS = NE * pb.slots() * sh.cdim;
    // forward: the fast path's ape add then pooling, the reference's ape add in double
    std::vector<float> Zx(pb.Zx);
    trex::nn::compressor_ape_add(p, pb.ape.data(), Zx.data());
    std::vector<float> S(size_t(nS), 0.0f), pooled(size_t(NE * sh.cdim)), rS(static_cast<size_t>(nS)), rpooled(size_t(NE * sh.cdim));
    trex::nn::compressor_pool_forward(p, pb.Cx.data(), Zx.data(), S.data(), pooled.data());
    trex::nn::compressor_pool_forward_ref(p, pb.Cx.data(), pb.Zx.data(), pb.ape.data(), rS.data(), rpooled.data());
    for (size_t k = 0; k < S.size(); ++k) ASSERT_NEAR(S[k], rS[k], 5e-6 * std::fabs(rS[k]) + 1e-7) << k;
    for (size_t k = 0; k < pooled.size(); ++k) ASSERT_NEAR(pooled[k], rpooled[k], 1e-5) << k;
    // backward on the same S, pooled
    std::vector<float> dCx(size_t(sh.N * W), 0.0f), dZx(size_t(sh.N * W), 0.0f), rdCx(dCx.size()), rdZx(dZx.size());
    trex::nn::compressor_pool_backward(p, pb.Cx.data(), S.data(), pooled.data(), pb.dpooled.data(), dCx.data(),
                                       dZx.data());
    trex::nn::compressor_pool_backward_ref(p, pb.Cx.data(), S.data(), pooled.data(), pb.dpooled.data(), rdCx.data(),
                                           rdZx.data(), nullptr);
    for (size_t k = 0; k < dCx.size(); ++k) {
      ASSERT_NEAR(dCx[k], rdCx[k], 1e-7 * std::fabs(rdCx[k])) << k;  // one rounding each: equal in practice
      ASSERT_NEAR(dZx[k], rdZx[k], 4e-7 * std::fabs(rdZx[k]) + 1e-12) << k;
    }
    std::vector<float> gape(pb.gape0), rgape(pb.gape0);
    trex::nn::compressor_ape_backward(p, dZx.data(), gape.data());
    trex::nn::compressor_pool_backward_ref(p, pb.Cx.data(), S.data(), pooled.data(), pb.dpooled.data(), rdCx.data(),
                                           rdZx.data(), rgape.data());
    for (size_t k = 0; k < gape.size(); ++k) ASSERT_NEAR(gape[k], rgape[k], 1e-5 * (1.0 + max_abs(rgape))) << k;
  }
}

// L = Σ_e,ch w_e,ch pooled_e,ch (w = dpooled) in double from the reference forward (logits Zx + ape).
double loss(const PoolProblem& pb, const std::vector<float>& Cx, const std::vector<float>& Zx, const std::vector<float>& ape) {
  const CompressorPool p = pb.args();
  std::vector<float> S(size_t(pb.NE() * pb.slots() * pb.cdim)), pooled(size_t(pb.NE() * pb.cdim));
  trex::nn::compressor_pool_forward_ref(p, Cx.data(), Zx.data(), ape.data(), S.data(), pooled.data());
  double L = 0;
  for (size_t k = 0; k < pooled.size(); ++k) L += double(pb.dpooled[k]) * pooled[k];
  return L;
}

TEST(CompressorPool, ReferenceBackwardMatchesCentralDifferences) {
  uint64_t seed = 50;
  for (const Shape& sh : shapes()) {
    PoolProblem pb = make_problem(seed++, sh.N, sh.m, sh.cdim, sh.overlap, sh.docs);
    const CompressorPool p = pb.args();
    const int64_t W = pb.W();
    std::vector<float> S(size_t(pb.NE() * pb.slots() * sh.cdim)), pooled(size_t(pb.NE() * sh.cdim));
    trex::nn::compressor_pool_forward_ref(p, pb.Cx.data(), pb.Zx.data(), pb.ape.data(), S.data(), pooled.data());
    std::vector<float> dCx(size_t(sh.N * W)), dZx(size_t(sh.N * W)), gape(size_t(sh.m * W), 0.0f);
    trex::nn::compressor_pool_backward_ref(p, pb.Cx.data(), S.data(), pooled.data(), pb.dpooled.data(), dCx.data(),
                                           dZx.data(), gape.data());
    // the float rounding of each perturbed pooled (~1e-7) over the step 2h, and the h^2 term: inside 2e-4 (gape:
    // a column's ~NE/m entries perturbed at once, 5e-4)
    const float h = 5e-3f;
    auto fd = [&](std::vector<float>& v, size_t k) {
      const float x0 = v[k], xp = x0 + h, xm = x0 - h;
      v[k] = xp;
      const double lp = loss(pb, pb.Cx, pb.Zx, pb.ape);
      v[k] = xm;
      const double lm = loss(pb, pb.Cx, pb.Zx, pb.ape);
      v[k] = x0;
      return (lp - lm) / (double(xp) - double(xm));
    };
    for (size_t k = 0; k < dCx.size(); ++k) ASSERT_NEAR(dCx[k], fd(pb.Cx, k), 2e-4) << "dCx " << k;
    for (size_t k = 0; k < dZx.size(); ++k) ASSERT_NEAR(dZx[k], fd(pb.Zx, k), 2e-4) << "dZx " << k;
    for (size_t k = 0; k < gape.size(); ++k) ASSERT_NEAR(gape[k], fd(pb.ape, k), 5e-4) << "gape " << k;
    int64_t zero = 0, nonzero = 0;  // the test covers both kinds of (token, column)
    for (float v : dZx) (v == 0.0f ? zero : nonzero)++;
    EXPECT_GT(zero, 0);
    EXPECT_GT(nonzero, 0);
  }
}

TEST(CompressorPool, CsaBlockZeroHasNoPreviousSlots) {
  const PoolProblem pb = make_problem(7, 45, 4, 6, true, {0, 18});
  const CompressorPool p = pb.args();
  const int64_t m = pb.m, cdim = pb.cdim, W = pb.W(), slots = pb.slots();
  std::vector<float> Zx(pb.Zx);
  trex::nn::compressor_ape_add(p, pb.ape.data(), Zx.data());
  std::vector<float> S(size_t(pb.NE() * slots * cdim), 7.0f), pooled(size_t(pb.NE() * cdim));
  std::vector<float> rS(S.size()), rpooled(pooled.size());
  trex::nn::compressor_pool_forward(p, pb.Cx.data(), Zx.data(), S.data(), pooled.data());
  trex::nn::compressor_pool_forward_ref(p, pb.Cx.data(), Zx.data(), nullptr, rS.data(), rpooled.data());
  int blocks0 = 0;
  for (int64_t e = 0; e < pb.NE(); ++e) {
    const int64_t s0 = pb.start[size_t(e)];
    for (int64_t ch = 0; ch < cdim; ++ch) {
      for (int64_t k = 0; k < m; ++k) {
        const size_t is = size_t((e * slots + k) * cdim + ch);
        if (pb.idx[size_t(e)] == 0) {
          EXPECT_EQ(S[is], 7.0f) << "the fast path leaves the empty slots alone (the model hands S in zeroed)";
          EXPECT_EQ(rS[is], 0.0f) << "the reference writes them 0";
        } else {
          EXPECT_GT(S[is], 0.0f);
        }
      }
      if (pb.idx[size_t(e)] != 0) continue;
      // block 0 pools its own m tokens' columns [cdim, 2 cdim) alone
      double mx = -1e30, sum = 0, acc = 0;
      for (int64_t k = 0; k < m; ++k) mx = std::max(mx, double(Zx[size_t((s0 + k) * W + cdim + ch)]));
      for (int64_t k = 0; k < m; ++k) sum += std::exp(double(Zx[size_t((s0 + k) * W + cdim + ch)]) - mx);
      for (int64_t k = 0; k < m; ++k)
        acc += std::exp(double(Zx[size_t((s0 + k) * W + cdim + ch)]) - mx) / sum * pb.Cx[size_t((s0 + k) * W + cdim + ch)];
      EXPECT_NEAR(pooled[size_t(e * cdim + ch)], acc, 1e-6);
    }
    blocks0 += pb.idx[size_t(e)] == 0;
  }
  EXPECT_EQ(blocks0, 2);  // one per document
  // the backward: a document's first block's columns [0, cdim) belong to its second entry (written), its last
  // block's columns [0, cdim) and the tokens past the last complete block to no entry (left 0)
  std::vector<float> dCx(size_t(pb.N * W), 0.0f), dZx(dCx.size(), 0.0f);
  trex::nn::compressor_pool_backward(p, pb.Cx.data(), S.data(), pooled.data(), pb.dpooled.data(), dCx.data(),
                                     dZx.data());
  auto written = [&](int64_t tok, int64_t col) { return dCx[size_t(tok * W + col)] != 0.0f; };
  // documents: [0, 18) blocks 0..3 (tokens 16, 17 in none), [18, 45) blocks 0..5 (tokens 42..44 in none)
  for (int64_t ch = 0; ch < cdim; ++ch) {
    EXPECT_TRUE(written(0, ch)) << "block 0's [0, cdim) read by the entry of block 1";
    EXPECT_TRUE(written(0, cdim + ch));
    EXPECT_FALSE(written(12, ch)) << "the last block's [0, cdim): no next entry in the document";
    EXPECT_TRUE(written(12, cdim + ch));
    for (int64_t col : {ch, cdim + ch}) {
      EXPECT_FALSE(written(16, col));
      EXPECT_FALSE(written(17, col));
      EXPECT_FALSE(written(44, col));
    }
    EXPECT_TRUE(written(18, ch));
    EXPECT_FALSE(written(38, ch));
  }
}

TEST(CompressorPool, EntryGridRestartsAtEveryDocument) {
  // the second document alone gives its entries' S, pooled and its tokens' dCx, dZx bit for bit
  for (bool overlap : {false, true}) {
    const PoolProblem pb = make_problem(11, 50, 4, 8, overlap, {0, 21});
    PoolProblem doc = pb;  // tokens 21 .. 49 as a batch of their own
    const int64_t W = pb.W(), slots = pb.slots(), cdim = pb.cdim, off = 21;
    doc.N = pb.N - off;
    doc.pos.assign(pb.pos.begin() + off, pb.pos.end());
    doc.start.clear(), doc.idx.clear();
    int64_t first_entry = -1;
    for (size_t e = 0; e < pb.start.size(); ++e)
      if (pb.start[e] >= off) {
        if (first_entry < 0) first_entry = int64_t(e);
        doc.start.push_back(int32_t(pb.start[e] - off));
        doc.idx.push_back(pb.idx[e]);
      }
    ASSERT_EQ(first_entry, 5);  // 21 / 4 entries in the first document
    ASSERT_EQ(doc.idx.front(), 0);
    doc.Cx.assign(pb.Cx.begin() + off * W, pb.Cx.end());
    doc.Zx.assign(pb.Zx.begin() + off * W, pb.Zx.end());
    doc.dpooled.assign(pb.dpooled.begin() + first_entry * cdim, pb.dpooled.end());
    auto run = [&](const PoolProblem& q, std::vector<float>& S, std::vector<float>& pooled, std::vector<float>& dCx,
                   std::vector<float>& dZx, std::vector<float>& gape) {
      const CompressorPool p = q.args();
      std::vector<float> Zx(q.Zx);
      trex::nn::compressor_ape_add(p, q.ape.data(), Zx.data());
      S.assign(size_t(q.NE() * slots * cdim), 0.0f);
      pooled.assign(size_t(q.NE() * cdim), 0.0f);
      trex::nn::compressor_pool_forward(p, q.Cx.data(), Zx.data(), S.data(), pooled.data());
      dCx.assign(size_t(q.N * W), 0.0f);
      dZx.assign(size_t(q.N * W), 0.0f);
      trex::nn::compressor_pool_backward(p, q.Cx.data(), S.data(), pooled.data(), q.dpooled.data(), dCx.data(),
                                         dZx.data());
      gape.assign(size_t(q.m * W), 0.0f);
      trex::nn::compressor_ape_backward(p, dZx.data(), gape.data());
    };
    std::vector<float> S, pooled, dCx, dZx, gape, dS, dpool, ddCx, ddZx, dgape;
    run(pb, S, pooled, dCx, dZx, gape);
    run(doc, dS, dpool, ddCx, ddZx, dgape);
    EXPECT_EQ(0, std::memcmp(S.data() + first_entry * slots * cdim, dS.data(), dS.size() * 4));
    EXPECT_EQ(0, std::memcmp(pooled.data() + first_entry * cdim, dpool.data(), dpool.size() * 4));
    EXPECT_EQ(0, std::memcmp(dCx.data() + off * W, ddCx.data(), ddCx.size() * 4));
    EXPECT_EQ(0, std::memcmp(dZx.data() + off * W, ddZx.data(), ddZx.size() * 4));
    // the ape classes restart too: the first document's gape share plus the second's is the whole (pos, not i)
    PoolProblem first = pb;
    first.N = off;
    first.pos.resize(size_t(off));
    first.start.resize(size_t(first_entry)), first.idx.resize(size_t(first_entry));
    std::vector<float> fgape(size_t(pb.m * W), 0.0f);
    trex::nn::compressor_ape_backward(first.args(), dZx.data(), fgape.data());
    for (size_t k = 0; k < gape.size(); ++k) EXPECT_NEAR(gape[k], fgape[k] + dgape[k], 1e-5) << k;
  }
}
