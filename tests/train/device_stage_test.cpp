// The device step's pipeline path (DeviceStepConfig::run_stages: the micro-batches through model::StageModel, what
// dist::Pipeline drives under --pp) on one stage holding the whole model: the first micro-batch's backward right
// after its forward, then the other forwards before their backwards (in order, as 1F1B keeps them), so several
// micro-batches are in flight. The step runs them as the GPU step does (train::RecomputingStage over one activation
// slot: the later backwards recompute their forwards, without adding the indexer's forward-time gradients again)
// and must give the plain accumulation's bytes: gradient norms and weights after each step (the losses to an ulp).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/config.hpp"
#include "model/model.hpp"
#include "train/cpu_device_step.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

namespace {

using namespace trex;

struct StepRecord {
  std::vector<double> loss, norm;
  std::vector<float> params;
  int64_t recomputed = 0;
};

StepRecord run_steps(bool through_stage, int64_t steps, int64_t accum) {
  train::DeviceStepConfig dc;
  dc.model = model::ModelConfig::preset("tiny");
  if (through_stage) {
    dc.gradient_regions = [](const model::ParamStore& st) {
      return std::vector<train::GradientRegion>{{0, int64_t(st.params().size()), nullptr}};
    };
    dc.run_stages = [](model::StageModel& m, std::span<const model::Batch> micro) {
      model::Losses sum;
      const int64_t L = m.config().num_hidden_layers;
      auto forward = [&](size_t i) {
        sum.add_weighted(m.stage_forward(int(i), micro[i], 0, L, nullptr), 1.0 / double(micro.size()));
      };
      forward(0);
      EXPECT_TRUE(m.stage_backward(0, nullptr).empty());  // right after its forward
      for (size_t i = 1; i < micro.size(); ++i) forward(i);
      for (size_t i = 1; i < micro.size(); ++i) EXPECT_TRUE(m.stage_backward(int(i), nullptr).empty());
      return sum;
    };
  }
  train::CpuDeviceStep step(dc);
  model::init_params(step.host(), dc.model, 5);
  const int64_t B = 2, T = 96;  // long enough that the indexer selects (its KL loss and gradients are live)
  Rng rng(9);
  std::vector<std::vector<int32_t>> tokens(size_t(accum), std::vector<int32_t>(size_t(B * T)));
  StepRecord r;
  for (int64_t s = 0; s < steps; ++s) {
    std::vector<model::Batch> micro;
    for (auto& t : tokens) {
      for (auto& x : t) x = int32_t(rng.next_u64() % uint64_t(dc.model.vocab_size));
      micro.push_back({B, T, t.data(), nullptr, nullptr});
    }
    r.loss.push_back(step.accumulate(micro).total);
    r.norm.push_back(step.grad_norm());
    step.update(r.norm.back(), 0.05, 1e-3);
    step.update_gate_bias();
  }
  r.params.assign(step.host().params().begin(), step.host().params().end());
  r.recomputed = step.recomputed_forwards();
  return r;
}

TEST(DeviceStage, OneStageThroughTheStageInterfaceGivesThePlainStepsBytes) {
  const StepRecord plain = run_steps(false, 3, 3), staged = run_steps(true, 3, 3);
  ASSERT_EQ(plain.loss.size(), 3u);
  // the losses within an ulp or two: the runner's sum of the micro-batch means is compiled in this file (and may
  // contract differently into FMAs than train_step.cpp's); the gradients and weights must be the same bytes
  for (size_t i = 0; i < plain.loss.size(); ++i) EXPECT_NEAR(plain.loss[i], staged.loss[i], 1e-14 * plain.loss[i]) << i;
  EXPECT_EQ(plain.norm, staged.norm);
  EXPECT_TRUE(plain.params == staged.params);
  EXPECT_EQ(plain.recomputed, 0);
  EXPECT_EQ(staged.recomputed, 3 * 2) << "micro-batches 1 and 2 of every step ran again at their backward";
  for (const double l : plain.loss) EXPECT_TRUE(std::isfinite(l) && l > 0) << l;
}

TEST(DeviceStage, APipelineStageWithoutItsGradientRegionsIsRefused) {
  train::DeviceStepConfig dc;
  dc.model = model::ModelConfig::preset("tiny");
  dc.run_stages = [](model::StageModel&, std::span<const model::Batch>) { return model::Losses{}; };
  EXPECT_THROW(train::CpuDeviceStep{dc}, Error);
}

}  // namespace
