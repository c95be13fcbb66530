// Pipeline planning without MPI: the FLOP-balanced stage split (dynamic programme vs the exhaustive reference,
// the per-layer FLOPs summing to flops_per_token) and the 1F1B schedule (every micro-batch forward before its
// backward, in order, with at most S - s micro-batches in flight on stage s).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "dist/pipeline.hpp"
#include "dist/stage_plan.hpp"
#include "model/config.hpp"
#include "model/model_info.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

namespace {

using namespace trex::dist;

TEST(StagePlan, DynamicProgrammeMatchesExhaustiveSearch) {
  trex::Rng rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t L = rng.uniform_int(1, 9);
    std::vector<double> c(static_cast<size_t>(L));
    for (auto& x : c) x = double(rng.uniform_int(1, 20));
    const double extra = double(rng.uniform_int(0, 30));
    for (int S = 1; S <= L; ++S) {
      const StagePlan a = plan_stages(c, extra, S), b = plan_stages_exhaustive(c, extra, S);
      ASSERT_EQ(a.stages(), S);
      EXPECT_EQ(a.max_cost(), b.max_cost()) << "trial " << trial << " S " << S;
      EXPECT_EQ(a.first.front(), 0);
      EXPECT_EQ(a.first.back(), L);
      for (int s = 0; s < S; ++s) EXPECT_LT(a.first[size_t(s)], a.first[size_t(s) + 1]) << "empty stage";
      EXPECT_DOUBLE_EQ(std::accumulate(a.cost.begin(), a.cost.end(), 0.0),
                       std::accumulate(c.begin(), c.end(), 0.0) + extra);
    }
  }
  EXPECT_THROW(plan_stages({1.0, 2.0}, 0.0, 3), trex::Error);
  EXPECT_THROW(plan_stages({1.0, 2.0}, 0.0, 0), trex::Error);
}

TEST(StagePlan, TinyPresetPutsTheHeadStageOnFewerLayers) {
  const auto cfg = trex::model::ModelConfig::preset("tiny");
  for (int64_t S : {16, 256}) {
    const auto f = trex::model::block_forward_flops(cfg, S);
    ASSERT_EQ(int64_t(f.layers.size()), cfg.num_hidden_layers);
    const double sum = std::accumulate(f.layers.begin(), f.layers.end(), 0.0) + f.head;
    EXPECT_NEAR(sum, trex::model::flops_per_token(cfg, S, true).forward, 1e-6 * sum);
  }
  const StagePlan p = plan_stages(cfg, 16, 2);
  // The head (V = 8192) and the MTP module cost more than several layers: the last stage gets fewer layers.
  EXPECT_GT(p.first[1], cfg.num_hidden_layers - p.first[1]);
  EXPECT_NE(p.str().find("layers 0-"), std::string::npos) << p.str();
}

TEST(PipelineSchedule, OneForwardOneBackwardWithBoundedInFlight) {
  for (int S = 1; S <= 4; ++S)
    for (int64_t M = 1; M <= 6; ++M)
      for (int s = 0; s < S; ++s) {
        const auto ops = Pipeline::schedule(s, S, M);
        ASSERT_EQ(int64_t(ops.size()), 2 * M);
        int64_t next_f = 0, next_b = 0, in_flight = 0, max_in_flight = 0;
        for (int64_t op : ops) {
          if (op >= 0) {
            EXPECT_EQ(op, next_f++);
            ++in_flight;
          } else {
            EXPECT_EQ(-op - 1, next_b++);
            EXPECT_LT(-op - 1, next_f) << "backward before forward";
            --in_flight;
          }
          max_in_flight = std::max(max_in_flight, in_flight);
        }
        EXPECT_LE(max_in_flight, std::min<int64_t>(S - s, M)) << "S " << S << " s " << s << " M " << M;
        if (s == S - 1) {
          EXPECT_EQ(max_in_flight, 1) << "the last stage alternates forward and backward";
        }
      }
}

}  // namespace
