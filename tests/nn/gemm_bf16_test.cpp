// The AVX512_BF16 GEMM against its reference (same bf16 rounding of the inputs, double accumulation): edge
// shapes (tiles, odd k, k across the kc block), every valid blocking, every transpose, beta, padded leading dimensions; the rounding
// itself (ties to even, NaN, inf) and gemm_batch under Bf16MatmulScope (threads, bit-identical reruns).
#include "nn/gemm_bf16.hpp"

#include <gtest/gtest.h>

#include "cpu_features.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "util/error.hpp"
#include "util/rng.hpp"

namespace {

using trex::nn::GemmCall;

// |fast - ref| <= (k + 4) * 2^-23 * (|alpha| sum |a b| + |beta c|): fp32 accumulation of exact bf16 products.
void check_call(const GemmCall& g, const std::vector<float>& c0, const std::vector<float>& got,
                const std::vector<float>& want, const std::string& what) {
  auto r = [](float x) { return std::fabs(double(trex::nn::bf16_to_float(trex::nn::float_to_bf16(x)))); };
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < g.k; ++p)
        s += r(g.trans_a ? g.a[p * g.lda + i] : g.a[i * g.lda + p]) * r(g.trans_b ? g.b[j * g.ldb + p] : g.b[p * g.ldb + j]);
      const size_t at = size_t(i * g.ldc + j);
      const double bound =
          double(g.k + 4) * std::ldexp(1.0, -23) * (std::fabs(g.alpha) * s + std::fabs(g.beta * c0[at])) + 1e-30;
      ASSERT_LE(std::fabs(double(got[at]) - double(want[at])), bound) << what << " at " << i << "," << j;
    }
}

}  // namespace

TEST(GemmBf16, RoundingIsNearestEven) {
  using trex::nn::bf16_to_float;
  using trex::nn::float_to_bf16;
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f)), 1.0f);
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 0x1p-8f)), 1.0f);                  // tie -> even (down)
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);    // tie -> even (up)
  EXPECT_EQ(bf16_to_float(float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f)), 1.0f + 0x1p-7f);  // above the tie
  EXPECT_EQ(bf16_to_float(float_to_bf16(-2.5f)), -2.5f);
  EXPECT_TRUE(std::isinf(bf16_to_float(float_to_bf16(std::numeric_limits<float>::infinity()))));
  EXPECT_TRUE(std::isinf(bf16_to_float(float_to_bf16(std::numeric_limits<float>::max()))));  // overflows
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  uint32_t snan_bits = 0x7f800001u;  // a NaN whose payload is only in the low bits must stay NaN
  float snan;
  std::memcpy(&snan, &snan_bits, 4);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(snan))));
  EXPECT_EQ(float_to_bf16(0x1p-130f), 0x0000);  // denormals flush to a signed zero, as vcvtne2ps2bf16 does
  EXPECT_EQ(float_to_bf16(-0x1p-127f), 0x8000);
  EXPECT_EQ(float_to_bf16(0x1p-126f), 0x0080);  // the smallest normal stays
}

// The kernel converts with vcvtne2ps2bf16: on every operand path (both transposes, interior and tail lanes) it
// must give float_to_bf16's bits. One product per element (k 1) against a power of two shows each operand as is:
// random bit patterns, ties, denormals, NaN, inf.
TEST(GemmBf16, KernelConvertsOperandsLikeFloatToBf16) {
  TREX_REQUIRE_BF16();
  trex::Rng rng(11);
  const int64_t m = 37, n = 45;
  std::vector<float> a(static_cast<size_t>(m)), b(static_cast<size_t>(n), 1.0f), c(static_cast<size_t>(m * n)), c2 = c;
  for (int64_t i = 0; i < m; ++i) {
    uint32_t u = uint32_t(rng.next_u64() >> 32);
    if (i % 3 == 0) u &= 0x807fffffu;                    // a denormal (or zero)
    if (i % 5 == 0) u = (u & 0xffff0000u) | 0x8000u;     // a tie
    if (i == 7) u = 0x7f800001u;                          // NaN with only a low payload bit
    if (i == 8) u = 0xff800000u;                          // -inf
    std::memcpy(&a[size_t(i)], &u, 4);
  }
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      // C = A (m x 1) B (1 x n) with B all ones: C[i][j] is A[i] rounded; and transposed roles for B's path
      const GemmCall g{bool(ta), bool(tb), m, n, 1, 1.0f, a.data(), ta ? m : 1, b.data(), tb ? 1 : n, 0.0f, c.data(), n};
      trex::nn::gemm_bf16(g);
      const GemmCall gt{bool(ta), bool(tb), n, m, 1, 1.0f, b.data(), ta ? n : 1, a.data(), tb ? 1 : m, 0.0f, c2.data(), m};
      trex::nn::gemm_bf16(gt);
      for (int64_t i = 0; i < m; ++i) {
        const float want = trex::nn::bf16_to_float(trex::nn::float_to_bf16(a[size_t(i)]));
        for (int64_t j = 0; j < n; ++j) {
          const float got = c[size_t(i * n + j)], got_t = c2[size_t(j * m + i)];
          if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(got) && std::isnan(got_t)) << i;
          } else {
            ASSERT_EQ(got, want) << "A path, row " << i << " ta " << ta << " tb " << tb;  // +0 == -0: the sum starts at +0
            ASSERT_EQ(got_t, want) << "B path, column " << i << " ta " << ta << " tb " << tb;
          }
        }
      }
    }
}

// k = 1..3 on tie values: one product per element, so a kernel that rounded differently from float_to_bf16
// would be off by 2^-8 relative, far above the bound.
TEST(GemmBf16, KernelRoundsLikeTheReference) {
  TREX_REQUIRE_BF16();
  trex::Rng rng(5);
  for (int64_t k : {1, 2, 3})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        const int64_t m = 9, n = 35;
        std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n), 0.0f), r = c;
        for (auto& v : a) v = 1.0f + float(int(rng.uniform() * 8)) * 0x1p-8f;  // ties and non-ties
        for (auto& v : b) v = -1.0f - float(int(rng.uniform() * 8)) * 0x1p-8f;
        const GemmCall g{bool(ta), bool(tb), m, n, k, 1.0f, a.data(), ta ? m : k, b.data(), tb ? k : n, 0.0f, c.data(), n};
        GemmCall gr = g;
        gr.c = r.data();
        trex::nn::gemm_bf16(g);
        trex::nn::gemm_bf16_reference(gr);
        check_call(g, std::vector<float>(c.size(), 0.0f), c, r, "k " + std::to_string(k));
      }
}

TEST(GemmBf16, MatchesReferenceOnEdgeShapes) {
  TREX_REQUIRE_BF16();
  trex::Rng rng(17);
  struct Shape {
    int64_t m, n, k;
  };
  for (const Shape s : {Shape{1, 1, 1}, Shape{7, 17, 31}, Shape{8, 32, 64}, Shape{13, 33, 600}, Shape{130, 65, 37},
                        Shape{129, 31, 1030}, Shape{40, 96, 512}})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (float beta : {0.0f, 0.5f}) {
          const int64_t pad = 3;  // leading dimensions wider than the matrices
          const int64_t lda = (ta ? s.m : s.k) + pad, ldb = (tb ? s.k : s.n) + pad, ldc = s.n + pad;
          std::vector<float> a(size_t((ta ? s.k : s.m) * lda)), b(size_t((tb ? s.n : s.k) * ldb)), c(size_t(s.m * ldc));
          for (auto& v : a) v = float(rng.normal());
          for (auto& v : b) v = float(rng.normal());
          for (auto& v : c) v = float(rng.normal());
          std::vector<float> c0 = c, r = c;
          const GemmCall g{bool(ta), bool(tb), s.m, s.n, s.k, 0.75f, a.data(), lda, b.data(), ldb, beta, c.data(), ldc};
          GemmCall gr = g;
          gr.c = r.data();
          trex::nn::gemm_bf16(g);
          trex::nn::gemm_bf16_reference(gr);
          const std::string what = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " ta " +
                                   std::to_string(ta) + " tb " + std::to_string(tb) + " beta " + std::to_string(beta);
          check_call(g, c0, c, r, what);
          for (int64_t i = 0; i < s.m; ++i)  // the padding columns of C are untouched
            for (int64_t j = s.n; j < ldc; ++j) ASSERT_EQ(c[size_t(i * ldc + j)], c0[size_t(i * ldc + j)]) << what;
        }
}

// Any valid blocking (what `trex tune gemm` times) computes the same product: within the reference's bound for
// every kc, and bit-identical to the default for any mc / nc at the default kc (only kc splits the k sums).
TEST(GemmBf16, EveryBlockingMatchesTheReference) {
  TREX_REQUIRE_BF16();
  trex::Rng rng(23);
  const int64_t m = 75, n = 130, k = 301;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n));
      for (auto& v : a) v = float(rng.normal());
      for (auto& v : b) v = float(rng.normal());
      for (auto& v : c) v = float(rng.normal());
      const int64_t lda = ta ? m : k, ldb = tb ? k : n;
      std::vector<float> ref = c, dflt = c;
      GemmCall g{bool(ta), bool(tb), m, n, k, 1.0f, a.data(), lda, b.data(), ldb, 0.5f, ref.data(), n};
      trex::nn::gemm_bf16_reference(g);
      g.c = dflt.data();
      trex::nn::gemm_bf16(g);
      for (const trex::nn::Bf16Blocking blk : {trex::nn::Bf16Blocking{64, 8, 32}, trex::nn::Bf16Blocking{128, 24, 64},
                                               trex::nn::Bf16Blocking{302, 80, 96}, trex::nn::Bf16Blocking{1024, 512, 2048},
                                               trex::nn::Bf16Blocking{512, 16, 32}, trex::nn::Bf16Blocking{512, 64, 160}}) {
        std::vector<float> out = c;
        g.c = out.data();
        trex::nn::gemm_bf16(g, blk);
        const std::string what = "kc " + std::to_string(blk.kc) + " mc " + std::to_string(blk.mc) + " nc " +
                                 std::to_string(blk.nc) + " ta " + std::to_string(ta) + " tb " + std::to_string(tb);
        check_call(g, c, out, ref, what);
        if (blk.kc == trex::nn::Bf16Blocking{}.kc) {
          EXPECT_EQ(out, dflt) << what;
        }
      }
    }
  std::vector<float> a(4), b(4), c(4);
  const GemmCall g{false, false, 2, 2, 2, 1.0f, a.data(), 2, b.data(), 2, 0.0f, c.data(), 2};
  EXPECT_THROW(trex::nn::gemm_bf16(g, trex::nn::Bf16Blocking{63, 8, 32}), trex::Error);   // odd kc
  EXPECT_THROW(trex::nn::gemm_bf16(g, trex::nn::Bf16Blocking{64, 12, 32}), trex::Error);  // mc not a multiple of 8
  EXPECT_THROW(trex::nn::gemm_bf16(g, trex::nn::Bf16Blocking{64, 8, 48}), trex::Error);   // nc not a multiple of 32
}

// Through gemm_batch (row/column cuts over the OpenMP threads) while the scope is on: matches the reference
// and two runs give the same bits; after the scope the fp32 path is back.
TEST(GemmBf16, BatchUnderScopeIsDeterministic) {
  TREX_REQUIRE_BF16();
  trex::Rng rng(23);
  const int64_t m = 300, n = 200, k = 700;
  std::vector<float> a(size_t(m * k)), b(size_t(n * k)), c1(size_t(m * n)), c2(size_t(m * n)), r(size_t(m * n));
  for (auto& v : a) v = float(rng.normal());
  for (auto& v : b) v = float(rng.normal());
  GemmCall g = trex::nn::linear_call(a.data(), b.data(), c1.data(), m, n, k);
  {
    trex::nn::Bf16MatmulScope bf16;
    EXPECT_TRUE(trex::nn::bf16_matmul_active());
    trex::nn::gemm_batch({&g, 1});
    g.c = c2.data();
    trex::nn::gemm_batch({&g, 1});
  }
  EXPECT_FALSE(trex::nn::bf16_matmul_active());
  EXPECT_EQ(std::memcmp(c1.data(), c2.data(), c1.size() * 4), 0) << "bf16 gemm_batch is not bit-reproducible";
  g.c = r.data();
  trex::nn::gemm_bf16_reference(g);
  g.c = c1.data();
  check_call(g, std::vector<float>(c1.size(), 0.0f), c1, r, "batch");
  // fp32 path again: agrees with the fp32 reference far more closely than bf16 rounding would allow
  std::vector<float> f(size_t(m * n)), fr(size_t(m * n));
  g.c = f.data();
  trex::nn::gemm_batch({&g, 1});
  trex::nn::gemm_reference(false, true, m, n, k, 1.0f, a.data(), k, b.data(), k, 0.0f, fr.data(), n);
  for (size_t i = 0; i < f.size(); ++i) ASSERT_NEAR(f[i], fr[i], 1e-3f) << i;
  double max_bf16_diff = 0;
  for (size_t i = 0; i < f.size(); ++i) max_bf16_diff = std::max(max_bf16_diff, std::fabs(double(c1[i]) - fr[i]));
  EXPECT_GT(max_bf16_diff, 1e-2) << "the scope did not switch to bf16 operands";
}

namespace {

std::vector<uint16_t> to_bf16(const std::vector<float>& x) {
  std::vector<uint16_t> out(x.size());
  trex::nn::round_to_bf16(x.data(), out.data(), int64_t(x.size()));
  return out;
}

}  // namespace

// round_to_bf16 (vector and tail) gives float_to_bf16's bits for every kind of value.
TEST(GemmBf16, RoundToBf16MatchesFloatToBf16) {
  trex::Rng rng(29);
  std::vector<float> x(77);
  for (size_t i = 0; i < x.size(); ++i) {
    uint32_t u = uint32_t(rng.next_u64() >> 32);
    if (i % 3 == 0) u &= 0x807fffffu;                 // denormal or zero
    if (i % 5 == 0) u = (u & 0xffff0000u) | 0x8000u;  // tie
    if (i == 7) u = 0x7f800001u;                       // NaN
    if (i == 40) u = 0xff800000u;                      // -inf
    if (i == 41) u = 0x7f7fffffu;                      // largest finite: rounds up to inf
    std::memcpy(&x[i], &u, 4);
  }
  const auto got = to_bf16(x);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], trex::nn::float_to_bf16(x[i])) << i;
}

// Operands given in bf16 (GemmCall::a_bf16 / b_bf16, the fp32 pointers null) give the same bits as the fp32
// operands rounded by the kernel: every transpose, odd k and odd leading dimensions (A copied), even ones (A
// read in place, a partial last panel copied), k across the kc block, partial tiles.
TEST(GemmBf16, Bf16OperandsGiveTheSameBitsAsRoundedFp32) {
  TREX_REQUIRE_BF16();
  trex::Rng rng(31);
  struct Shape {
    int64_t m, n, k, pad;
  };
  for (const Shape s : {Shape{1, 1, 1, 0}, Shape{7, 17, 31, 1}, Shape{16, 32, 64, 0}, Shape{130, 65, 1030, 0},
                        Shape{129, 40, 600, 2}, Shape{131, 33, 1031, 3}, Shape{64, 600, 256, 0}})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (int which = 1; which < 4; ++which) {  // bit 0: A in bf16, bit 1: B in bf16
          const int64_t lda = (ta ? s.m : s.k) + s.pad, ldb = (tb ? s.k : s.n) + s.pad, ldc = s.n;
          std::vector<float> a(size_t((ta ? s.k : s.m) * lda)), b(size_t((tb ? s.n : s.k) * ldb));
          for (auto& v : a) v = float(rng.normal());
          for (auto& v : b) v = float(rng.normal());
          const auto a16 = to_bf16(a), b16 = to_bf16(b);
          std::vector<float> want(size_t(s.m * ldc), 0.5f), got = want;
          const GemmCall g{bool(ta), bool(tb), s.m, s.n, s.k, 0.75f, a.data(), lda, b.data(), ldb, 0.5f, want.data(), ldc};
          trex::nn::gemm_bf16(g);
          GemmCall h = g;
          h.c = got.data();
          if (which & 1) h.a = nullptr, h.a_bf16 = a16.data();
          if (which & 2) h.b = nullptr, h.b_bf16 = b16.data();
          trex::nn::gemm_bf16(h);
          ASSERT_EQ(std::memcmp(want.data(), got.data(), want.size() * 4), 0)
              << s.m << "x" << s.n << "x" << s.k << " pad " << s.pad << " ta " << ta << " tb " << tb << " bf16 "
              << which;
          GemmCall r = h;  // the reference reads the bf16 operands too
          std::vector<float> ref(size_t(s.m * ldc), 0.5f);
          r.c = ref.data();
          trex::nn::gemm_bf16_reference(r);
          check_call(g, std::vector<float>(want.size(), 0.5f), got, ref, "reference on bf16 operands");
        }
}

// Through gemm_batch: cuts into row / column blocks carry the bf16 operands along; without the scope a call
// whose operand exists only in bf16 is refused before any thread starts.
TEST(GemmBf16, BatchCutsBf16OperandsAndRefusesThemOutsideTheScope) {
  TREX_REQUIRE_BF16();
  trex::Rng rng(37);
  const int64_t m = 300, n = 200, k = 512;
  std::vector<float> a(size_t(m * k)), b(size_t(k * n)), want(size_t(m * n)), got(size_t(m * n));
  for (auto& v : a) v = float(rng.normal());
  for (auto& v : b) v = float(rng.normal());
  const auto a16 = to_bf16(a), b16 = to_bf16(b);
  GemmCall g{false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, want.data(), n};
  GemmCall h{false, false, m, n, k, 1.0f, nullptr, k, nullptr, n, 0.0f, got.data(), n, a16.data(), b16.data()};
  std::vector<float> want_wide(size_t(100 * n)), got_wide(size_t(100 * n));
  {
    trex::nn::Bf16MatmulScope bf16;
    trex::nn::gemm_batch({&g, 1});  // m > n: cut into row blocks
    trex::nn::gemm_batch({&h, 1});
    GemmCall gw = g, hw = h;  // the first 100 rows: n > m, cut into column blocks
    gw.m = hw.m = 100;
    gw.c = want_wide.data();
    hw.c = got_wide.data();
    trex::nn::gemm_batch({&gw, 1});
    trex::nn::gemm_batch({&hw, 1});
  }
  EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * 4), 0);
  EXPECT_EQ(std::memcmp(want_wide.data(), got_wide.data(), want_wide.size() * 4), 0);
  EXPECT_THROW(trex::nn::gemm_batch({&h, 1}), trex::Error);
}
