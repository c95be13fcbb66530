// The device top-k's sort key (src/cuda/topk_key.hpp), which needs no device: sorting (score, index) pairs by
// topk_key gives nn::topk_lower_index's order exactly — score descending, ties to the lower index, -0 equal to +0,
// infinities and denormals in their place — so the k smallest keys are the CPU's top k. CUDA builds only (it links
// the CPU references through the gpu harness library); runs on machines without a GPU.
#include <gtest/gtest.h>

#if TREX_HAVE_CUDA
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "cuda/topk_key.hpp"
#include "nn/ops.hpp"
#include "util/rng.hpp"

using trex::cuda::detail::topk_key;
using trex::cuda::detail::topk_key_index;

namespace {
// The whole row in the key's order: what the device's select + sort returns for k = n.
std::vector<int32_t> key_order(const std::vector<float>& s) {
  std::vector<uint64_t> keys(s.size());
  for (size_t i = 0; i < s.size(); ++i) keys[i] = topk_key(s[i], uint32_t(i));
  std::sort(keys.begin(), keys.end());
  std::vector<int32_t> out(s.size());
  for (size_t i = 0; i < s.size(); ++i) out[i] = int32_t(topk_key_index(keys[i]));
  return out;
}
std::vector<int32_t> cpu_order(const std::vector<float>& s) {
  std::vector<int32_t> out(s.size());
  trex::nn::topk_lower_index(s.data(), int64_t(s.size()), int64_t(s.size()), out.data());
  return out;
}
}  // namespace

TEST(CudaTopkKey, OrderEqualsTheCpuTopkOnTiesSignedZerosAndInfinities) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special = {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, std::numeric_limits<float>::denorm_min(),
                                      -std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                                      -std::numeric_limits<float>::max(), -0.0f, 0.0f, 1.0f, inf, -inf};
  EXPECT_EQ(key_order(special), cpu_order(special));
  trex::Rng rng(7);
  for (int levels : {0, 2, 5, 50})
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<float> s(size_t(rng.uniform_int(1, 600)));
      for (float& v : s) {
        v = levels ? float(rng.uniform_int(0, levels - 1) - levels / 2) : float(rng.normal());
        if (rng.uniform_int(0, 20) == 0) v = special[size_t(rng.uniform_int(0, int64_t(special.size()) - 1))];
      }
      ASSERT_EQ(key_order(s), cpu_order(s)) << "levels " << levels << " rep " << rep;
    }
}

TEST(CudaTopkKey, KeysAreDistinctAndCarryTheIndex) {
  EXPECT_NE(topk_key(1.0f, 3), topk_key(1.0f, 4));
  EXPECT_LT(topk_key(1.0f, 3), topk_key(1.0f, 4));  // tie: the lower index first
  EXPECT_LT(topk_key(2.0f, 9), topk_key(1.0f, 0));  // the higher score first
  EXPECT_EQ(topk_key(0.0f, 5), topk_key(-0.0f, 5));
  EXPECT_EQ(topk_key_index(topk_key(-3.5f, 123456789u)), 123456789u);
  // a key that orders wrongly would fail the order test above: check that it can (a flipped comparison)
  const std::vector<float> s = {1.0f, 2.0f, 2.0f};
  EXPECT_NE(key_order(s), (std::vector<int32_t>{2, 1, 0}));
  EXPECT_EQ(key_order(s), (std::vector<int32_t>{1, 2, 0}));
}
#else
TEST(CudaTopkKey, NotBuilt) { GTEST_SKIP() << "built without the CUDA backend (-DTREX_CUDA=OFF or no nvcc)"; }
#endif
