// Sampler: greedy is argmax (ties to the lower id), top-k 1 and a tiny top-p reduce to greedy, the same seed
// gives the same draws, top-k never picks outside the k best, and frequencies follow the softmax.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "infer/sampler.hpp"

using namespace trex::infer;

TEST(Sampler, GreedyIsArgmaxWithLowerIdTies) {
  std::vector<float> l = {0.5f, 2.0f, -1.0f, 2.0f};
  Sampler s({0.0, 1.0, 0, 1});
  EXPECT_EQ(s.sample(l), 1);
  EXPECT_EQ(argmax(l), 1);
}

TEST(Sampler, TopK1AndTinyTopPAreGreedy) {
  std::vector<float> l = {0.1f, 0.3f, 0.2f, 0.25f};
  Sampler k1({1.0, 1.0, 1, 5}), p0({1.0, 1e-6, 0, 5});
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(k1.sample(l), 1);
    EXPECT_EQ(p0.sample(l), 1);
  }
}

TEST(Sampler, SameSeedSameTokensAndTopKRespected) {
  std::vector<float> l(50);
  for (size_t i = 0; i < l.size(); ++i) l[i] = float(std::sin(double(i)));
  Sampler a({0.9, 0.95, 5, 42}), b({0.9, 0.95, 5, 42}), c({0.9, 0.95, 5, 43});
  std::vector<int32_t> best5;
  std::vector<int32_t> ids(l.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t(i);
  std::sort(ids.begin(), ids.end(), [&](int32_t x, int32_t y) { return l[size_t(x)] > l[size_t(y)]; });
  best5.assign(ids.begin(), ids.begin() + 5);
  int differ = 0;
  for (int i = 0; i < 200; ++i) {
    int32_t x = a.sample(l), y = b.sample(l), z = c.sample(l);
    EXPECT_EQ(x, y);
    differ += x != z;
    EXPECT_NE(std::find(best5.begin(), best5.end(), x), best5.end());
  }
  EXPECT_GT(differ, 0);
}

TEST(Sampler, FrequenciesFollowSoftmax) {
  std::vector<float> l = {0.0f, std::log(3.0f)};  // p = 0.25 / 0.75
  Sampler s({1.0, 1.0, 0, 9});
  int ones = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ones += s.sample(l) == 1;
  EXPECT_NEAR(double(ones) / n, 0.75, 0.02);
  // temperature 0.5 squares the odds: 9:1
  Sampler t({0.5, 1.0, 0, 9});
  ones = 0;
  for (int i = 0; i < n; ++i) ones += t.sample(l) == 1;
  EXPECT_NEAR(double(ones) / n, 0.9, 0.02);
}
