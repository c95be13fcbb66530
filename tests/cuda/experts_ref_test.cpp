// The CPU side of the routed-expert op check (tests/cuda/gpu/experts_cases.hpp), which needs no device: the bounds
// the device is held to hold, with margin, for other implementations of the same recipe — the CPU fast path
// (nn::experts_forward / experts_backward) against the reference, fp32 and under the bf16 scope, and a stand-in
// for the device: the same data flow with every product summed in double and the SwiGLU in double, so that its
// intermediates differ from the reference's by roundings and under bf16 some operands round the other way (the
// case the bounds' rounding intervals are for; the fast path's bf16 results are the reference's bits). They fail on
// a different recipe (fp32 results against the bf16 oracle and the reverse), on a routing weight moved by 2^-10 and
// on an output moved past its bound. Also the problem's counts and the uneven loads' generator.
// CUDA builds only (the harness links the CUDA backend); runs on machines without a GPU.
#include <gtest/gtest.h>

#if TREX_HAVE_CUDA
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "cpu_features.hpp"
#include "experts_cases.hpp"
#include "nn/gemm.hpp"
#include "nn/gemm_bf16.hpp"
#include "nn/ops.hpp"
#include "util/error.hpp"

using namespace trex::cuda::check;

namespace {

// expert e of p: the reference's forward and its bounds, the fast path's forward, then both backwards from the
// reference's saved g, u, h (the device check's arrangement: the same saved values on both sides)
struct ExpertRun {
  ExpertValues ref, fast;
  ExpertBounds bound;
};
ExpertRun run_expert(const ExpertsProblem& p, int64_t e, bool ref_bf16, bool fast_bf16) {
  ExpertRun r;
  cpu_experts_forward(p, e, true, ref_bf16, r.ref);
  cpu_experts_forward(p, e, false, fast_bf16, r.fast);
  ExpertValues rb, fb;
  rb.g = fb.g = r.ref.g, rb.u = fb.u = r.ref.u, rb.h = fb.h = r.ref.h;
  cpu_experts_backward(p, e, true, ref_bf16, rb);
  cpu_experts_backward(p, e, false, fast_bf16, fb);
  r.bound = experts_forward_bounds(p, e, r.ref, ref_bf16);
  const ExpertBounds bb = experts_backward_bounds(p, e, rb, ref_bf16);
  r.ref.dx = rb.dx, r.ref.dw = rb.dw, r.ref.g1 = rb.g1, r.ref.g3 = rb.g3, r.ref.g2 = rb.g2;
  r.fast.dx = fb.dx, r.fast.dw = fb.dw, r.fast.g1 = fb.g1, r.fast.g3 = fb.g3, r.fast.g2 = fb.g2;
  r.bound.dx = bb.dx, r.bound.dw = bb.dw, r.bound.g1 = bb.g1, r.bound.g3 = bb.g3, r.bound.g2 = bb.g2;
  return r;
}

// every non-empty expert of p, concatenated
ExpertRun run_all(const ExpertsProblem& p, bool ref_bf16, bool fast_bf16) {
  ExpertRun all;
  for (int64_t e = 0; e < p.experts; ++e) {
    if (p.rows_of(e) == 0) continue;
    const ExpertRun r = run_expert(p, e, ref_bf16, fast_bf16);
    append(all.ref, r.ref), append(all.fast, r.fast), append(all.bound, r.bound);
  }
  return all;
}

// The device's stand-in: the reference's data flow, every product summed in double (gemm_reference, or
// gemm_bf16_reference: operands rounded to bf16) and rounded once, the SwiGLU and the dot of dw in double.
void twin_product(bool bf16, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (bf16)
    trex::nn::gemm_bf16_reference(trex::nn::GemmCall{ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc});
  else
    trex::nn::gemm_reference(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}
ExpertValues twin_forward(const ExpertsProblem& p, int64_t e, bool bf16) {
  const int64_t n = p.rows_of(e), o = p.offsets[size_t(e)], d = p.d, f = p.f;
  const float *x = p.x.data() + o * d, *w = p.w.data() + o;
  ExpertValues v;
  v.g.resize(size_t(n * f)), v.u = v.g, v.h = v.g, v.y.resize(size_t(n * d));
  twin_product(bf16, false, true, n, f, d, x, d, p.w1(e), d, 0, v.g.data(), f);
  twin_product(bf16, false, true, n, f, d, x, d, p.w3(e), d, 0, v.u.data(), f);
  trex::nn::swiglu_forward_ref(v.g.data(), v.u.data(), v.h.data(), n * f, p.limit);
  std::vector<float> hw(v.h.size());
  for (size_t i = 0; i < hw.size(); ++i) hw[i] = v.h[i] * w[int64_t(i) / f];
  twin_product(bf16, false, true, n, d, f, hw.data(), f, p.w2(e), f, 0, v.y.data(), d);
  return v;
}
void twin_backward(const ExpertsProblem& p, int64_t e, bool bf16, ExpertValues& io) {
  const int64_t n = p.rows_of(e), o = p.offsets[size_t(e)], d = p.d, f = p.f;
  const float *x = p.x.data() + o * d, *w = p.w.data() + o, *dy = p.dy.data() + o * d;
  io.g1.assign(p.g1_start(e), p.g1_start(e) + f * d);
  io.g3.assign(p.g3_start(e), p.g3_start(e) + f * d);
  io.g2.assign(p.g2_start(e), p.g2_start(e) + f * d);
  io.dx.resize(size_t(n * d)), io.dw.resize(size_t(n));
  std::vector<float> hw(io.h.size()), dhw(io.h.size()), dh(io.h.size()), dg(io.h.size()), du(io.h.size());
  for (size_t i = 0; i < hw.size(); ++i) hw[i] = io.h[i] * w[int64_t(i) / f];
  twin_product(bf16, false, false, n, f, d, dy, d, p.w2(e), f, 0, dhw.data(), f);
  twin_product(bf16, true, false, d, f, n, dy, d, hw.data(), f, 1, io.g2.data(), f);
  for (int64_t r = 0; r < n; ++r) {
    double acc = 0;
    for (int64_t j = 0; j < f; ++j) {
      acc += double(dhw[size_t(r * f + j)]) * io.h[size_t(r * f + j)];
      dh[size_t(r * f + j)] = dhw[size_t(r * f + j)] * w[r];
    }
    io.dw[size_t(r)] = float(acc);
  }
  trex::nn::swiglu_backward_ref(io.g.data(), io.u.data(), dh.data(), dg.data(), du.data(), n * f, p.limit);
  twin_product(bf16, false, false, n, d, f, dg.data(), f, p.w1(e), d, 0, io.dx.data(), d);
  twin_product(bf16, false, false, n, d, f, du.data(), f, p.w3(e), d, 1, io.dx.data(), d);
  twin_product(bf16, true, false, f, d, n, dg.data(), f, x, d, 1, io.g1.data(), d);
  twin_product(bf16, true, false, f, d, n, du.data(), f, x, d, 1, io.g3.data(), d);
}

// The twin against the reference on every non-empty expert (the backward from the reference's saved values), and
// how many of the twin's bf16 operands w*h round the other way from the reference's.
ExpertRun run_twin(const ExpertsProblem& p, bool bf16, int64_t* flips) {
  ExpertRun all;
  *flips = 0;
  for (int64_t e = 0; e < p.experts; ++e) {
    if (p.rows_of(e) == 0) continue;
    ExpertValues ref, rb;
    cpu_experts_forward(p, e, true, bf16, ref);
    ExpertValues twin = twin_forward(p, e, bf16);
    rb.g = ref.g, rb.u = ref.u, rb.h = ref.h;
    ExpertValues tb = rb;
    cpu_experts_backward(p, e, true, bf16, rb);
    twin_backward(p, e, bf16, tb);
    ExpertBounds b = experts_forward_bounds(p, e, ref, bf16);
    const ExpertBounds bb = experts_backward_bounds(p, e, rb, bf16);
    for (size_t i = 0; i < ref.h.size(); ++i) {
      const float wr = p.w[size_t(p.offsets[size_t(e)] + int64_t(i) / p.f)];
      *flips += trex::nn::float_to_bf16(ref.h[i] * wr) != trex::nn::float_to_bf16(twin.h[i] * wr);
    }
    ref.dx = rb.dx, ref.dw = rb.dw, ref.g1 = rb.g1, ref.g3 = rb.g3, ref.g2 = rb.g2;
    twin.dx = tb.dx, twin.dw = tb.dw, twin.g1 = tb.g1, twin.g3 = tb.g3, twin.g2 = tb.g2;
    b.dx = bb.dx, b.dw = bb.dw, b.g1 = bb.g1, b.g3 = bb.g3, b.g2 = bb.g2;
    append(all.ref, ref), append(all.fast, twin), append(all.bound, b);
  }
  return all;
}

const std::vector<int64_t> kCounts{37, 0, 1, 130, 64};  // an empty expert, a one-row expert, uneven loads

void expect_within_with_margin(const ExpertRun& r, double margin, const char* recipe) {
  for (const Compare& c : compare_experts(r.fast, r.ref, r.bound, true, true)) {
    EXPECT_TRUE(c.ok()) << recipe << ": " << c.str();
    EXPECT_LE(c.worst_ratio, margin) << recipe << ": " << c.str();
    std::printf("%s %s\n", recipe, c.str().c_str());
  }
}

int failing(const std::vector<Compare>& cs) {
  return int(std::count_if(cs.begin(), cs.end(), [](const Compare& c) { return !c.ok(); }));
}

}  // namespace

TEST(CudaExpertsRef, ProblemAndUnevenCounts) {
  const ExpertsProblem p = make_experts_problem(5, 48, 80, kCounts, 4.0f, 1);
  EXPECT_EQ(p.offsets, (std::vector<int64_t>{0, 37, 37, 38, 168, 232}));
  EXPECT_EQ(p.x.size(), size_t(232 * 48));
  EXPECT_NE(p.w1(0)[0], p.w1(1)[0]);  // the experts' windows differ
  const std::vector<int64_t> c = uneven_counts(64, 49152, 2, 9);
  EXPECT_EQ(std::accumulate(c.begin(), c.end(), int64_t(0)), 49152);
  EXPECT_EQ(std::count(c.begin(), c.end(), int64_t(0)), 2);
  const int64_t busiest = *std::max_element(c.begin(), c.end());
  EXPECT_GT(busiest, 49152 / 64 * 3 / 2);  // uneven: the busiest well above the mean
  EXPECT_THROW(make_experts_problem(2, 8, 8, {1}, 0, 1), trex::Error);
}

TEST(CudaExpertsRef, Fp32FastPathWithinTheBoundsWithMargin) {
  const ExpertsProblem p = make_experts_problem(5, 48, 80, kCounts, 4.0f, 1);
  const ExpertRun r = run_all(p, false, false);
  int clamped_g = 0, clamped_u = 0;
  for (size_t i = 0; i < r.ref.g.size(); ++i)
    clamped_g += r.ref.g[i] > 4.0f, clamped_u += std::fabs(r.ref.u[i]) > 4.0f;
  EXPECT_GT(clamped_g, 0) << "the check must exercise the SwiGLU clamp";
  EXPECT_GT(clamped_u, 0);
  expect_within_with_margin(r, 0.5, "fp32");
  // without a clamp and at odd sizes
  expect_within_with_margin(run_all(make_experts_problem(3, 33, 70, {5, 0, 19}, 0.0f, 2), false, false), 0.5,
                            "fp32 odd");
}

TEST(CudaExpertsRef, Bf16FastPathWithinTheBoundsWithMargin) {
  TREX_REQUIRE_BF16();
  const ExpertsProblem p = make_experts_problem(5, 48, 80, kCounts, 4.0f, 1);
  expect_within_with_margin(run_all(p, true, true), 0.5, "bf16");
  expect_within_with_margin(run_all(make_experts_problem(4, 64, 96, {0, 0, 300, 0}, 10.0f, 3), true, true), 0.5,
                            "bf16 one expert");
}

TEST(CudaExpertsRef, DoubleSumTwinWithinTheBoundsWithMargin) {
  int64_t flips = 0;
  expect_within_with_margin(run_twin(make_experts_problem(5, 48, 80, kCounts, 4.0f, 1), false, &flips), 0.5,
                            "fp32 twin");
}

TEST(CudaExpertsRef, Bf16DoubleSumTwinWithinTheBoundsThroughRoundingFlips) {
  TREX_REQUIRE_BF16();
  // the twin's w*h rounds to another bf16 value than the reference's in some elements: the rounding intervals
  // must cover the one-step differences those make downstream (uneven loads, an empty expert, a one-row expert)
  int64_t flips = 0;
  const ExpertsProblem p = make_experts_problem(5, 64, 256, {300, 0, 1, 517, 130}, 4.0f, 4);
  expect_within_with_margin(run_twin(p, true, &flips), 0.5, "bf16 twin");
  std::printf("bf16 twin: %lld of %lld operands w*h rounded the other way\n", (long long)flips,
              (long long)(p.rows() * p.f));
  EXPECT_GT(flips, 0) << "the check must exercise a bf16 rounding flip";
}

TEST(CudaExpertsRef, BoundsFailOnTheOtherRecipe) {
  TREX_REQUIRE_BF16();
  const ExpertsProblem p = make_experts_problem(5, 48, 80, kCounts, 4.0f, 1);
  // fp32 results held to the bf16 oracle, and bf16 results to the fp32 oracle: every product's output fails
  for (bool ref_bf16 : {true, false}) {
    const ExpertRun r = run_all(p, ref_bf16, !ref_bf16);
    const std::vector<Compare> cs = compare_experts(r.fast, r.ref, r.bound, true, true);
    for (const Compare& c : cs) {
      std::printf("%s oracle: %s\n", ref_bf16 ? "bf16" : "fp32", c.str().c_str());
      if (c.what != "dw" && c.what != "h") {  // (h and dw are not products' outputs: not required to fail)
        EXPECT_FALSE(c.ok()) << c.str();
      }
    }
    EXPECT_GE(failing(cs), 6);
  }
}

TEST(CudaExpertsRef, BoundsFailOnAPerturbedValue) {
  ExpertsProblem p = make_experts_problem(5, 48, 80, kCounts, 4.0f, 1);
  const ExpertRun r = run_expert(p, 3, false, false);
  // one routing weight moved by 2^-10 (relative) in the run under test: that row's y fails, the others stay in
  ExpertsProblem q = p;
  const int64_t row = 5;
  q.w[size_t(p.offsets[3] + row)] *= 1.0f + 0x1.0p-10f;
  ExpertValues moved;
  cpu_experts_forward(q, 3, false, false, moved);
  std::vector<Compare> cs = compare_experts(moved, r.ref, r.bound, true, false);
  EXPECT_TRUE(cs[0].ok() && cs[1].ok() && cs[2].ok()) << "g, u, h do not depend on w";
  EXPECT_FALSE(cs[3].ok()) << cs[3].str();
  EXPECT_EQ(cs[3].worst / p.d, row) << cs[3].str();
  EXPECT_LE(cs[3].bad, p.d);
  // an output moved to 1.5 times its bound, at one element
  ExpertValues nudged = r.fast;
  nudged.dx[7] = float(r.ref.dx[7] + 1.5 * r.bound.dx[7]);
  cs = compare_experts(nudged, r.ref, r.bound, false, true);
  EXPECT_FALSE(cs[0].ok());
  EXPECT_EQ(cs[0].bad, 1);
  EXPECT_EQ(failing(cs), 1);
}

TEST(CudaExpertsRef, BoundsRefuseToRunUnderTheBf16Scope) {
  TREX_REQUIRE_BF16();
  const ExpertsProblem p = make_experts_problem(2, 16, 16, {3, 2}, 4.0f, 1);
  ExpertValues r;
  cpu_experts_forward(p, 0, true, false, r);
  trex::nn::Bf16MatmulScope bf16;
  EXPECT_THROW(experts_forward_bounds(p, 0, r, false), trex::Error);
}
#endif
