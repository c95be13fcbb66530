// The cost model's formulas against their sources (PLANNER_AND_TUNER.md §A3) and the model profile against
// model_info's counts.
#include "plan/cost_model.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "model/model_info.hpp"
#include "util/error.hpp"

namespace {

namespace fs = std::filesystem;
using namespace trex::plan;

const fs::path kProConfig = fs::path(TREX_SOURCE_DIR) / "configs/deepseek-v4-pro.json";

TEST(PlanFormulas, CollectivesFollowTheAlphaBetaModel) {
  // NCCL's bus-bandwidth factors: all-reduce 2(n-1)/n, reduce-scatter / all-gather / all-to-all (n-1)/n.
  const double S = 1e9, B = 100;  // 1 GB at 100 GB/s
  EXPECT_NEAR(allreduce_seconds(S, 8, B, 0), 2.0 * 7 / 8 * 0.01, 1e-15);
  EXPECT_NEAR(reduce_scatter_seconds(S, 8, B, 0), 7.0 / 8 * 0.01, 1e-15);
  EXPECT_NEAR(alltoall_seconds(S, 4, B, 0), 3.0 / 4 * 0.01, 1e-15);
  EXPECT_NEAR(allreduce_seconds(0, 4, B, 10), 6 * 10e-6, 1e-15);  // 2(n-1) latency steps
  EXPECT_EQ(allreduce_seconds(S, 1, B, 10), 0.0);                 // one rank: nothing to do
  EXPECT_EQ(alltoall_seconds(S, 1, B, 10), 0.0);
}

TEST(PlanFormulas, PipelineBubbleOf1F1BAndInterleaving) {
  // Equal stages: (p-1)/m of the ideal time for 1F1B, (p-1)/(v·m) interleaved (Narayanan et al.).
  const std::vector<double> t(8, 0.5);
  for (int64_t m : {8, 32})
    for (int v : {1, 2, 4}) {
      const double ideal = double(m) * 0.5;
      EXPECT_NEAR(pipeline_seconds(t, m, v) - ideal, ideal * 7.0 / double(v * m), 1e-12) << m << " " << v;
    }
  // Unequal stages (Alpa): Σ t + (m-1)·max.
  EXPECT_NEAR(pipeline_seconds({1.0, 3.0, 2.0}, 4, 1), 6.0 + 3 * 3.0, 1e-12);
  EXPECT_THROW(pipeline_seconds({}, 4, 1), trex::Error);
}

TEST(PlanFormulas, MegatronBytesPerParameterAndInflightMicroBatches) {
  EXPECT_EQ(bytes_per_param(1, true), 18.0);          // replicated: bf16 w 2 + fp32 g 4 + master, m, v 12
  EXPECT_EQ(bytes_per_param(32, true), 6.0 + 12.0 / 32);  // distributed optimizer
  EXPECT_EQ(bytes_per_param(32, false), 6.0);          // optimizer state on the host
  // 1F1B: stage s holds min(m, p - s) micro-batches; interleaving multiplies by 1 + (p-1)/(p·v).
  EXPECT_EQ(inflight_micro_batches(0, 8, 1, 32), 8.0);
  EXPECT_EQ(inflight_micro_batches(7, 8, 1, 32), 1.0);
  EXPECT_EQ(inflight_micro_batches(0, 8, 1, 4), 4.0);
  EXPECT_NEAR(inflight_micro_batches(0, 8, 2, 32), 8.0 * (1 + 7.0 / 16), 1e-12);
}

TEST(PlanProfile, ParametersAndFlopsAddUpToModelInfo) {
  const auto cfg = trex::model::load_model_config(kProConfig.string());
  const auto m = profile_model(cfg, 4096, "pro");
  const auto pc = trex::model::count_parameters(cfg);
  double total = m.embedding_params + m.head_params + m.head_expert_params;
  for (const auto& l : m.layers) total += l.dense_params + l.expert_params;
  EXPECT_EQ(int64_t(total), pc.total_with_mtp);
  const auto f = trex::model::flops_per_token(cfg, 4096, true);
  EXPECT_NEAR(m.forward_flops, f.forward, 1e-6 * f.forward);
  double attn = 0;
  for (const auto& l : m.layers) {
    EXPECT_GT(l.dense_flops, 0);
    EXPECT_TRUE(l.moe);
    attn += l.attention_flops;
  }
  EXPECT_EQ(m.layers.size(), 61u);
  // Attention + indexer of the 61 main layers: the §10 table's 6.20 + 0.25 GFLOP less the MTP block's share.
  EXPECT_GT(attn, 6.0e9);
  EXPECT_LT(attn, 6.45e9);
}

TEST(PlanCostModel, StaticMemoryIsTheMegatronEstimatorOverTheRanksShare) {
  const auto cfg = trex::model::ModelConfig::preset("tiny");
  const auto m = profile_model(cfg, 256, "tiny");
  Cluster c = cluster_preset("cpu2");
  const Workload w{.ranks = 4, .gbs = 8};
  Candidate k{.tp = 1, .pp = 1, .ep = 2, .dp = 4, .edp = 2, .mbs = 2, .micro_batches = 1};
  for (auto opt : {OptimizerPlacement::Replicated, OptimizerPlacement::Sharded, OptimizerPlacement::HostSwap}) {
    k.optimizer = opt;
    const auto lc = layer_costs(m, c, w, k);
    for (size_t l = 0; l < m.layers.size(); ++l) {
      const auto& lp = m.layers[l];
      double expect = 0;
      if (opt == OptimizerPlacement::Replicated) expect = 18 * (lp.dense_params + lp.expert_params / 2);
      if (opt == OptimizerPlacement::Sharded) expect = (6 + 12.0 / 4) * lp.dense_params + (6 + 12.0 / 2) * lp.expert_params / 2;
      if (opt == OptimizerPlacement::HostSwap) expect = 6 * (lp.dense_params + lp.expert_params / 2);
      EXPECT_NEAR(lc.static_gb[l] * 1e9, expect, 1e-3) << to_string(opt) << " layer " << l;
    }
  }
}

TEST(PlanCostModel, RecomputeTradesMemoryForTime) {
  const auto cfg = trex::model::load_model_config(kProConfig.string());
  const auto m = profile_model(cfg, 4096, "pro");
  const Cluster c = cluster_preset("cm384");
  const Workload w{.ranks = 512, .gbs = 1024};
  Candidate k{.tp = 2, .pp = 8, .vpp = 2, .ep = 64, .dp = 32, .edp = 1, .micro_batches = 32};
  std::vector<double> secs, act;
  for (auto r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    k.recompute = r;
    const auto lc = layer_costs(m, c, w, k);
    secs.push_back(lc.seconds[10]);
    act.push_back(lc.activation_gb[10]);
  }
  EXPECT_LT(secs[0], secs[1]);
  EXPECT_LT(secs[1], secs[2]);
  EXPECT_GT(act[0], act[1]);
  EXPECT_GT(act[1], act[2]);
  // Full recompute keeps the n = 4 mHC streams of the layer input: n·d·2 bytes per token, SP-split over TP2.
  EXPECT_NEAR(act[2] * 1e9, 4.0 * 7168 * 2 * 4096 / 2, 1.0);
}

}  // namespace
