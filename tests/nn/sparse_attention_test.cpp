// The joint-softmax attention core (nn/sparse_attention.hpp): the fast path against the double reference, forward
// and backward; the reference backward against central differences of its forward; windows cut at document
// starts; empty compressed lists; the sink's gradient against its closed form.
#include "nn/sparse_attention.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "util/rng.hpp"
#include "float_vectors.hpp"

using trex::nn::SparseAttention;

namespace {

enum class Lists { none, all_visible, subsets };  // SWA; HCA-like; CSA-like (top-k subsets, -1 padding skipped)

// A packed batch's attention inputs: documents starting at doc_starts, window keys cut at each document's start,
// compressed entries of ratio m restarting at every document (query at position p sees floor((p + 1) / m)).
struct AttentionProblem {
  int64_t N = 0, H = 0, hd = 0, window = 0, NE = 0, cmax = 0;
  std::vector<float> q, kv, C, sink;
  std::vector<int32_t> ws, comp, ncomp;
  float scale = 1;
  SparseAttention args() const {
    SparseAttention a;
    a.N = N, a.H = H, a.hd = hd, a.window = window, a.NE = NE, a.cmax = cmax;
    a.q = q.data(), a.kv = kv.data(), a.C = C.empty() ? nullptr : C.data();
    a.ws = ws.data(), a.comp = comp.data(), a.ncomp = ncomp.data(), a.sink = sink.data(), a.scale = scale;
    return a;
  }
};

using trex::testing::randn;

AttentionProblem make_problem(uint64_t seed, int64_t N, int64_t H, int64_t hd, int64_t window, std::vector<int64_t> doc_starts,
                     Lists lists, int64_t m = 4, int64_t topk = 3, double qscale = 1.5) {
  trex::Rng rng(seed);
  AttentionProblem p;
  p.N = N, p.H = H, p.hd = hd, p.window = window;
  p.scale = float(1.0 / std::sqrt(double(hd)));
  doc_starts.push_back(N);
  std::vector<int32_t> doc_start(static_cast<size_t>(N)), base(static_cast<size_t>(N)), nvis(static_cast<size_t>(N));
  int64_t NE = 0;
  for (size_t d = 0; d + 1 < doc_starts.size(); ++d) {
    for (int64_t i = doc_starts[d]; i < doc_starts[d + 1]; ++i) {
      doc_start[size_t(i)] = int32_t(doc_starts[d]);
      base[size_t(i)] = int32_t(NE);
      nvis[size_t(i)] = int32_t((i - doc_starts[d] + 1) / m);
    }
    NE += (doc_starts[d + 1] - doc_starts[d]) / m;
  }
  for (int64_t i = 0; i < N; ++i) p.ws.push_back(int32_t(std::max<int64_t>(doc_start[size_t(i)], i - window + 1)));
  p.ncomp.assign(size_t(N), 0);
  if (lists != Lists::none) {
    p.NE = NE;
    p.cmax = lists == Lists::all_visible ? *std::max_element(nvis.begin(), nvis.end()) : topk;
    p.comp.assign(size_t(std::max<int64_t>(1, N * p.cmax)), -7);  // unused slots hold garbage, as in the model
    for (int64_t i = 0; i < N; ++i) {
      int32_t* c = p.comp.data() + i * p.cmax;
      const int32_t nv = nvis[size_t(i)];
      if (lists == Lists::all_visible) {
        for (int32_t e = 0; e < nv; ++e) c[p.ncomp[size_t(i)]++] = base[size_t(i)] + e;
      } else {  // a top-k selection in selection order, padded with -1, compacted as the model does
        std::vector<int32_t> vis(static_cast<size_t>(nv));
        for (int32_t e = 0; e < nv; ++e) vis[size_t(e)] = base[size_t(i)] + e;
        rng.shuffle(vis);
        std::vector<int32_t> sel(static_cast<size_t>(topk), -1);
        for (int64_t j = 0; j < std::min<int64_t>(topk, nv); ++j) sel[size_t(j)] = vis[size_t(j)];
        for (int32_t e : sel)
          if (e >= 0) c[p.ncomp[size_t(i)]++] = e;
      }
    }
  } else {
    p.comp.assign(1, 0);
  }
  p.q = randn(rng, size_t(N * H * hd), qscale);
  p.kv = randn(rng, size_t(N * hd));
  if (p.NE > 0) p.C = randn(rng, size_t(p.NE * hd));
  p.sink = randn(rng, size_t(H));
  return p;
}

struct Outputs {
  std::vector<float> P, o, dq, dkv, dC, dsink;
};

Outputs run_fast(const AttentionProblem& p, const std::vector<float>& g, int nthreads) {
  Outputs r;
  const SparseAttention a = p.args();
  r.P.assign(size_t(p.N * p.H * a.kmax()), 0.0f);
  r.o.resize(size_t(p.N * p.H * p.hd));
  trex::nn::sparse_attention_forward(a, r.P.data(), r.o.data());
  r.dq.resize(r.o.size());
  trex::nn::Arena arena;
  const trex::nn::SparseAttentionGrads kg =
      trex::nn::sparse_attention_backward(a, r.P.data(), r.o.data(), g.data(), r.dq.data(), arena, nthreads);
  r.dkv.assign(kg.dkv, kg.dkv + p.N * p.hd);
  r.dC.assign(kg.dC, kg.dC + p.NE * p.hd);
  r.dsink.assign(kg.dsink, kg.dsink + p.H);
  return r;
}

Outputs run_ref(const AttentionProblem& p, const std::vector<float>& g) {
  Outputs r;
  const SparseAttention a = p.args();
  r.P.assign(size_t(p.N * p.H * a.kmax()), 0.0f);
  r.o.resize(size_t(p.N * p.H * p.hd));
  trex::nn::sparse_attention_forward_ref(a, r.P.data(), r.o.data());
  r.dq.resize(r.o.size());
  r.dkv.resize(size_t(p.N * p.hd));
  r.dC.resize(size_t(p.NE * p.hd));
  r.dsink.resize(size_t(p.H));
  trex::nn::sparse_attention_backward_ref(a, r.P.data(), r.o.data(), g.data(), r.dq.data(), r.dkv.data(),
                                          r.dC.data(), r.dsink.data());
  return r;
}

// |fast - ref| <= kRel (|ref| + rms(ref)) per element. The fast path's fp32 dots of length hd, fast_expf (2 ulp)
// and float sums over at most kmax keys (forward) or kmax H terms per key row (backward) stay within a few
// hundred u of the double reference at these sizes; kRel = 1e-5 is 168 u (the worst measured ratio is printed).
constexpr double kRel = 1e-5;
double expect_close(const std::vector<float>& fast, const std::vector<float>& ref, const char* what) {
  EXPECT_EQ(fast.size(), ref.size()) << what;
  double ss = 0;
  for (float v : ref) ss += double(v) * v;
  const double rms = ref.empty() ? 0 : std::sqrt(ss / double(ref.size()));
  double worst = 0;
  for (size_t i = 0; i < std::min(fast.size(), ref.size()); ++i) {
    const double allowed = kRel * (std::fabs(double(ref[i])) + rms) + 1e-30;
    const double ratio = std::fabs(double(fast[i]) - double(ref[i])) / allowed;
    worst = std::max(worst, ratio);
    if (ratio > 1) {
      ADD_FAILURE() << what << " element " << i << ": fast " << fast[i] << " ref " << ref[i];
      break;
    }
  }
  return worst;
}

// P's written entries only (the rest of each row is not part of the contract)
std::vector<float> used_p(const AttentionProblem& p, const std::vector<float>& P) {
  std::vector<float> out;
  const int64_t kmax = p.window + p.cmax;
  for (int64_t i = 0; i < p.N; ++i)
    for (int64_t h = 0; h < p.H; ++h)
      for (int64_t e = 0; e < i - p.ws[size_t(i)] + 1 + p.ncomp[size_t(i)]; ++e)
        out.push_back(P[size_t((i * p.H + h) * kmax + e)]);
  return out;
}

void fast_matches_reference(const AttentionProblem& p, int nthreads) {
  trex::Rng rng(99);
  const std::vector<float> g = randn(rng, size_t(p.N * p.H * p.hd));
  const Outputs f = run_fast(p, g, nthreads), r = run_ref(p, g);
  double worst = 0;
  worst = std::max(worst, expect_close(used_p(p, f.P), used_p(p, r.P), "P"));
  worst = std::max(worst, expect_close(f.o, r.o, "o"));
  // the backward from the same P and o: the fast one's inputs fed to the reference too
  Outputs rb = r;
  trex::nn::sparse_attention_backward_ref(p.args(), f.P.data(), f.o.data(), g.data(), rb.dq.data(), rb.dkv.data(),
                                          rb.dC.data(), rb.dsink.data());
  worst = std::max(worst, expect_close(f.dq, rb.dq, "dq"));
  worst = std::max(worst, expect_close(f.dkv, rb.dkv, "dkv"));
  worst = std::max(worst, expect_close(f.dC, rb.dC, "dC"));
  worst = std::max(worst, expect_close(f.dsink, rb.dsink, "dsink"));
  std::printf("N %lld H %lld hd %lld w %lld NE %lld cmax %lld threads %d: worst |fast-ref| / bound = %.3f\n",
              (long long)p.N, (long long)p.H, (long long)p.hd, (long long)p.window, (long long)p.NE,
              (long long)p.cmax, nthreads, worst);
}

}  // namespace

TEST(SparseAttention, FastMatchesReference) {
  // hd 64: dot4 blocks of four keys; 24: one 8-lane tail after the 16s; 20: scalar tails only (n % 8 != 0)
  fast_matches_reference(make_problem(1, 70, 3, 64, 16, {0, 23, 40}, Lists::none), 2);
  fast_matches_reference(make_problem(2, 70, 3, 64, 16, {0, 23, 40}, Lists::all_visible), 1);
  fast_matches_reference(make_problem(3, 70, 3, 64, 16, {0, 23, 40}, Lists::subsets, 4, 5), 3);
  fast_matches_reference(make_problem(4, 53, 2, 24, 9, {0, 30}, Lists::subsets, 3, 4), 2);
  fast_matches_reference(make_problem(5, 41, 5, 20, 7, {0}, Lists::all_visible, 5), 2);
}

TEST(SparseAttention, FastBackwardIsTheSameBitsOnEveryRun) {
  const AttentionProblem p = make_problem(6, 64, 2, 32, 8, {0, 20}, Lists::subsets, 4, 3);
  trex::Rng rng(5);
  const std::vector<float> g = randn(rng, size_t(p.N * p.H * p.hd));
  const Outputs a = run_fast(p, g, 3), b = run_fast(p, g, 3);
  EXPECT_EQ(0, std::memcmp(a.dkv.data(), b.dkv.data(), a.dkv.size() * 4));
  EXPECT_EQ(0, std::memcmp(a.dC.data(), b.dC.data(), a.dC.size() * 4));
  EXPECT_EQ(0, std::memcmp(a.dsink.data(), b.dsink.data(), a.dsink.size() * 4));
  EXPECT_EQ(0, std::memcmp(a.dq.data(), b.dq.data(), a.dq.size() * 4));
}

// L = Σ G · o through the reference forward; every q, kv, C and sink element's central difference against the
// reference backward. eps 1e-2: the float outputs' rounding (≈ 1e-7 relative, over ~10² terms) divided by 2 eps
// stays near 1e-5, the truncation error eps² f''' / 6 near 1e-4; the bound 2e-3 + 1e-2 |grad| is far below a
// wrong term's size (gradients here are 0.1 - 1).
TEST(SparseAttention, ReferenceBackwardMatchesCentralDifferences) {
  for (Lists lists : {Lists::none, Lists::all_visible, Lists::subsets}) {
    AttentionProblem p = make_problem(7, 14, 2, 8, 4, {0, 5}, lists, 2, 2, 1.0);
    trex::Rng rng(8);
    const std::vector<float> G = randn(rng, size_t(p.N * p.H * p.hd));
    const Outputs r = run_ref(p, G);
    auto loss = [&]() {
      std::vector<float> P(size_t(p.N * p.H * (p.window + p.cmax))), o(size_t(p.N * p.H * p.hd));
      trex::nn::sparse_attention_forward_ref(p.args(), P.data(), o.data());
      double L = 0;
      for (size_t j = 0; j < o.size(); ++j) L += double(G[j]) * double(o[j]);
      return L;
    };
    auto check = [&](std::vector<float>& x, const std::vector<float>& grad, const char* what) {
      ASSERT_EQ(x.size(), grad.size()) << what;
      const float eps = 1e-2f;
      for (size_t j = 0; j < x.size(); ++j) {
        const float keep = x[j];
        x[j] = keep + eps;
        const double lp = loss();
        x[j] = keep - eps;
        const double lm = loss();
        x[j] = keep;
        const double fd = (lp - lm) / (2.0 * double(eps));
        ASSERT_NEAR(grad[j], fd, 2e-3 + 1e-2 * std::fabs(fd)) << what << " element " << j << " lists "
                                                              << int(lists);
      }
    };
    check(p.q, r.dq, "dq");
    check(p.kv, r.dkv, "dkv");
    check(p.C, r.dC, "dC");
    check(p.sink, r.dsink, "dsink");
    if (lists != Lists::none) {
      EXPECT_GT(p.NE, 0);
    }
  }
}

TEST(SparseAttention, WindowStartsAtTheDocumentStart) {
  // documents [0, 6), [6, 20), [20, 30); window 8
  const AttentionProblem p = make_problem(9, 30, 2, 16, 8, {0, 6, 20}, Lists::all_visible, 3);
  EXPECT_EQ(p.ws[6], 6);
  EXPECT_EQ(p.ws[13], 6);
  EXPECT_EQ(p.ws[14], 7);
  EXPECT_EQ(p.ws[20], 20);
  // A query at a document start with no entry visible: o = σ(l - sink) kv[i] exactly, in closed form.
  std::vector<float> g(size_t(p.N * p.H * p.hd), 0.0f);
  const Outputs f = run_fast(p, g, 2), r = run_ref(p, g);
  for (int64_t i : {int64_t(0), int64_t(6), int64_t(20)}) {
    ASSERT_EQ(p.ncomp[size_t(i)], 0);
    for (int64_t h = 0; h < p.H; ++h) {
      double l = 0;
      for (int64_t j = 0; j < p.hd; ++j) l += double(p.q[size_t((i * p.H + h) * p.hd + j)]) * p.kv[size_t(i * p.hd + j)];
      const double pr = 1.0 / (1.0 + std::exp(double(p.sink[size_t(h)]) - l * p.scale));
      for (int64_t j = 0; j < p.hd; ++j) {
        const double want = pr * p.kv[size_t(i * p.hd + j)];
        EXPECT_NEAR(f.o[size_t((i * p.H + h) * p.hd + j)], want, 1e-5 * (1 + std::fabs(want)));
        EXPECT_NEAR(r.o[size_t((i * p.H + h) * p.hd + j)], want, 1e-6 * (1 + std::fabs(want)));
      }
    }
  }
  // Another document's keys change nothing: document 0's kv rows moved, document 1's outputs the same bits.
  AttentionProblem moved = p;
  for (int64_t j = 0; j < 6 * p.hd; ++j) moved.kv[size_t(j)] += 3.0f;
  const Outputs fm = run_fast(moved, g, 2), rm = run_ref(moved, g);
  const size_t b = size_t(6 * p.H * p.hd), e = size_t(20 * p.H * p.hd);
  EXPECT_TRUE(std::equal(f.o.begin() + long(b), f.o.begin() + long(e), fm.o.begin() + long(b)));
  EXPECT_TRUE(std::equal(r.o.begin() + long(b), r.o.begin() + long(e), rm.o.begin() + long(b)));
  // The backward from one query reaches exactly its window's kv rows: g nonzero on query 15 only (ws 8).
  trex::Rng rng(3);
  std::vector<float> g15(g.size(), 0.0f);
  for (int64_t j = 0; j < p.H * p.hd; ++j) g15[size_t(15 * p.H * p.hd + j)] = float(rng.normal());
  for (const Outputs& out : {run_fast(p, g15, 2), run_ref(p, g15)}) {
    for (int64_t t = 0; t < p.N; ++t) {
      bool any = false;
      for (int64_t j = 0; j < p.hd; ++j) any = any || out.dkv[size_t(t * p.hd + j)] != 0.0f;
      EXPECT_EQ(any, t >= 8 && t <= 15) << "kv row " << t;
    }
  }
}

TEST(SparseAttention, EmptyCompressedListsAreTheWindowAlone) {
  // Entries exist but no query lists one (NE > 0, ncomp all 0): the same bits as the window-only problem, and
  // no gradient reaches the entries.
  const AttentionProblem swa = make_problem(10, 40, 3, 32, 8, {0, 17}, Lists::none);
  AttentionProblem empty = swa;
  empty.NE = 5;
  empty.cmax = 4;
  empty.C = std::vector<float>(size_t(5 * 32), 1.0f);
  empty.comp.assign(size_t(40 * 4), 2);  // garbage beyond ncomp: never read
  trex::Rng rng(4);
  const std::vector<float> g = randn(rng, size_t(40 * 3 * 32));
  const Outputs a = run_fast(swa, g, 2), b = run_fast(empty, g, 2);
  EXPECT_TRUE(a.o == b.o);
  EXPECT_TRUE(used_p(swa, a.P) == used_p(empty, b.P));
  EXPECT_TRUE(a.dq == b.dq);
  EXPECT_TRUE(a.dkv == b.dkv);
  EXPECT_TRUE(a.dsink == b.dsink);
  EXPECT_TRUE(std::all_of(b.dC.begin(), b.dC.end(), [](float v) { return v == 0.0f; }));
  const Outputs r = run_ref(empty, g);
  EXPECT_TRUE(std::all_of(r.dC.begin(), r.dC.end(), [](float v) { return v == 0.0f; }));
}

TEST(SparseAttention, SinkGradientInClosedForm) {
  // One token, one key: P = σ(l - s), o = P k, g · o = P (g · k); dL/ds = -(1 - P) P (g · k) — the sink only
  // takes probability away. Sinks far below and above the logit: the gradient vanishes at both ends.
  for (float sink : {-30.0f, -1.0f, 0.0f, 0.7f, 30.0f}) {
    AttentionProblem p = make_problem(11, 1, 1, 16, 4, {0}, Lists::none);
    p.sink = {sink};
    trex::Rng rng(12);
    const std::vector<float> g = randn(rng, 16);
    double l = 0, gk = 0;
    for (int64_t j = 0; j < 16; ++j) {
      l += double(p.q[size_t(j)]) * p.kv[size_t(j)];
      gk += double(g[size_t(j)]) * p.kv[size_t(j)];
    }
    const double P = 1.0 / (1.0 + std::exp(double(sink) - l * p.scale)), want = -(1 - P) * P * gk;
    const Outputs f = run_fast(p, g, 1), r = run_ref(p, g);
    EXPECT_NEAR(r.dsink[0], want, 1e-6 * (1 + std::fabs(want))) << "sink " << sink;
    EXPECT_NEAR(f.dsink[0], want, 1e-5 * (1 + std::fabs(want))) << "sink " << sink;
  }
}
