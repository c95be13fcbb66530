// The fixed-order fp32 GEMM (nn/gemm_fixed_order.hpp): both micro-kernels (AVX-512 where the CPU has it, AVX2)
// bitwise equal to their plain-loop twin for every transpose, tail and k block; close to the double-accumulation reference; a row's bits independent of the number and the
// values of the other rows (and a column's of the other columns); dispatched by GemmCall::rows_invariant.
#include "nn/gemm_fixed_order.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "util/error.hpp"
#include "util/rng.hpp"

using namespace trex::nn;

namespace {

struct Operands {
  std::vector<float> a, b, c;
};

Operands random_operands(trex::Rng& rng, int64_t m, int64_t n, int64_t k) {
  Operands o;
  o.a.resize(size_t(m * k));
  o.b.resize(size_t(n * k));
  o.c.resize(size_t(m * n));
  for (auto& v : o.a) v = float(rng.normal());
  for (auto& v : o.b) v = float(rng.normal());
  for (auto& v : o.c) v = float(rng.normal());
  return o;
}

GemmCall call_of(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, float beta, Operands& o, float* c) {
  return GemmCall{ta, tb, m, n, k, alpha, o.a.data(), ta ? m : k, o.b.data(), tb ? k : n, beta, c, n};
}

bool same_bits(float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0; }

}  // namespace

TEST(GemmFixedOrder, BitwiseEqualToItsLoopTwinAndCloseToTheReference) {
  trex::Rng rng(11);
  // tails in m (6), n (16), k blocks (256) and an empty k
  for (auto [m, n, k] : {std::array<int64_t, 3>{1, 1, 1}, {5, 15, 7}, {6, 16, 256}, {8, 32, 31}, {13, 33, 257}, {17, 65, 9}, {97, 530, 600},
                         {7, 9, 0}}) {
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (auto [alpha, beta] : {std::pair{1.0f, 0.0f}, {1.5f, 0.5f}, {1.0f, 1.0f}}) {
          Operands o = random_operands(rng, m, n, k);
          std::vector<float> fast = o.c, avx2 = o.c, twin = o.c, ref = o.c;
          gemm_fixed_order(call_of(ta, tb, m, n, k, alpha, beta, o, fast.data()));
          gemm_fixed_order(call_of(ta, tb, m, n, k, alpha, beta, o, avx2.data()), FixedOrderKernel::avx2);
          gemm_fixed_order_reference(call_of(ta, tb, m, n, k, alpha, beta, o, twin.data()));
          gemm_reference(ta, tb, m, n, k, alpha, o.a.data(), ta ? m : k, o.b.data(), tb ? k : n, beta, ref.data(), n);
          for (size_t i = 0; i < fast.size(); ++i) {
            ASSERT_TRUE(same_bits(fast[i], twin[i])) << m << "x" << n << "x" << k << " ta " << ta << " tb " << tb
                                                     << " alpha " << alpha << " element " << i << ": " << fast[i]
                                                     << " vs " << twin[i];
            ASSERT_TRUE(same_bits(avx2[i], twin[i])) << "AVX2 kernel, element " << i;
            ASSERT_NEAR(fast[i], ref[i], 1e-4 * (1 + std::sqrt(double(k))) * (1 + std::fabs(ref[i])));
          }
        }
  }
}

TEST(GemmFixedOrder, RowsDoNotDependOnTheOtherRows) {
  trex::Rng rng(12);
  const int64_t n = 75, k = 300, m = 41;
  for (bool tb : {false, true}) {
    Operands o = random_operands(rng, m, n, k);
    std::vector<float> all(size_t(m * n));
    gemm_fixed_order(call_of(false, tb, m, n, k, 1.0f, 0.0f, o, all.data()));
    // every row alone, and every suffix of the batch (the row at each place of a micro-tile, other values around)
    for (int64_t first = 0; first < m; ++first) {
      Operands sub = o;
      sub.a.assign(o.a.begin() + first * k, o.a.end());
      for (size_t i = size_t(k); i < sub.a.size(); ++i) sub.a[i] = -sub.a[i];  // other rows, other values
      std::vector<float> part(size_t((m - first) * n));
      gemm_fixed_order(call_of(false, tb, m - first, n, k, 1.0f, 0.0f, sub, part.data()));
      for (int64_t j = 0; j < n; ++j)
        ASSERT_TRUE(same_bits(part[size_t(j)], all[size_t(first * n + j)])) << "row " << first << " col " << j;
    }
  }
}

TEST(GemmFixedOrder, ColumnsDoNotDependOnTheOtherColumns) {
  trex::Rng rng(13);
  const int64_t m = 20, n = 50, k = 70;
  Operands o = random_operands(rng, m, n, k);
  std::vector<float> all(size_t(m * n));
  gemm_fixed_order(call_of(false, true, m, n, k, 1.0f, 0.0f, o, all.data()));
  for (int64_t j0 : {0, 3, 17, 49}) {  // columns j0.. of B (weights [n, k]): C's columns j0..
    Operands sub = o;
    sub.b.assign(o.b.begin() + j0 * k, o.b.end());
    std::vector<float> part(size_t(m * (n - j0)));
    gemm_fixed_order(GemmCall{false, true, m, n - j0, k, 1.0f, sub.a.data(), k, sub.b.data(), k, 0.0f, part.data(), n - j0});
    for (int64_t i = 0; i < m; ++i)
      ASSERT_TRUE(same_bits(part[size_t(i * (n - j0))], all[size_t(i * n + j0)])) << "row " << i << " col " << j0;
  }
}

TEST(GemmFixedOrder, GemmBatchRunsItForRowsInvariantCalls) {
  trex::Rng rng(14);
  const int64_t m = 300, n = 64, k = 96;  // large enough that gemm_batch cuts the call into row blocks
  Operands o = random_operands(rng, m, n, k);
  std::vector<float> batch(size_t(m * n)), direct(size_t(m * n));
  GemmCall g = call_of(false, true, m, n, k, 1.0f, 0.0f, o, batch.data());
  g.rows_invariant = true;
  gemm_batch({&g, 1});
  gemm_fixed_order(call_of(false, true, m, n, k, 1.0f, 0.0f, o, direct.data()));
  for (size_t i = 0; i < batch.size(); ++i) ASSERT_TRUE(same_bits(batch[i], direct[i])) << "element " << i;
}

TEST(GemmFixedOrder, RefusesOperandsGivenOnlyInBf16) {
  std::vector<float> c(4);
  std::vector<uint16_t> a16(4), b16(4);
  GemmCall g{false, true, 2, 2, 2, 1.0f, nullptr, 2, nullptr, 2, 0.0f, c.data(), 2, a16.data(), b16.data()};
  EXPECT_THROW(gemm_fixed_order(g), trex::Error);
}
