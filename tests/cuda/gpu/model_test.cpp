// gpu-labelled: the GPU model against the CPU model on the tiny preset (model_parity.hpp): one step's losses and
// gradients, fp32 and bf16 products; 20 training steps' loss curves (AdamW, Muon) with a resume across devices;
// the trainer's device step (gradient accumulation, clipped norm, state in the checkpoint layout) against the CPU's;
// the GPU decoder against the CPU decoder.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gpu_test.hpp"
#include "model/config.hpp"
#include "model_parity.hpp"
#include "cuda/gpu_model.hpp"
#include "model/model.hpp"
#include "nn/gemm_bf16.hpp"
#include "util/error.hpp"

using namespace trex;
using namespace trex::cuda;
using namespace trex::cuda::check;

TEST(CudaModel, TinyStepMatchesTheCpuModelFp32) {
  TREX_REQUIRE_GPU();
  const StepParity r = compare_step(model::ModelConfig::preset("tiny"), GemmType::fp32, 7, 2, 64);
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}

TEST(CudaModel, TinyStepMatchesTheCpuModelBf16) {
  TREX_REQUIRE_GPU();
  if (!nn::bf16_matmul_supported()) GTEST_SKIP() << "this CPU lacks AVX512_BF16: no CPU bf16 products to compare with";
  const StepParity r = compare_step(model::ModelConfig::preset("tiny"), GemmType::bf16, 7, 2, 64);
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}

TEST(CudaModel, TinyStepWithDenseIndexerWarmup) {
  TREX_REQUIRE_GPU();
  model::ModelConfig cfg = model::ModelConfig::preset("tiny");
  cfg.indexer_dense_warmup = true;
  const StepParity r = compare_step(cfg, GemmType::fp32, 11, 2, 64);
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}

TEST(CudaModel, TwentyAdamWStepsFollowTheCpuCurveAndResumeAcrossDevices) {
  TREX_REQUIRE_GPU();
  const CurveParity r =
      compare_training(model::ModelConfig::preset("tiny"), GemmType::fp32, train::OptimizerKind::AdamW, 20, 3e-3, 5, 2, 64);
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}

TEST(CudaModel, TwentyMuonStepsFollowTheCpuCurve) {
  TREX_REQUIRE_GPU();
  const CurveParity r =
      compare_training(model::ModelConfig::preset("tiny"), GemmType::fp32, train::OptimizerKind::Muon, 20, 2e-3, 5, 2, 64);
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}

TEST(CudaModel, TrainerDeviceStepFollowsTheCpuStepAdamW) {
  TREX_REQUIRE_GPU();
  const TrainStepParity r = compare_train_steps(model::ModelConfig::preset("tiny"), GemmType::fp32,
                                                train::OptimizerKind::AdamW, 6, 2, 0.05, 1e-3, 21, 2, 64);
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}

TEST(CudaModel, TrainerDeviceStepFollowsTheCpuStepMuon) {
  TREX_REQUIRE_GPU();
  const TrainStepParity r = compare_train_steps(model::ModelConfig::preset("tiny"), GemmType::fp32,
                                                train::OptimizerKind::Muon, 6, 2, 0.05, 1e-3, 22, 2, 64);
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}

TEST(CudaDecoder, FollowsTheCpuDecoderAtEveryPosition) {
  TREX_REQUIRE_GPU();
  const DecodeParity r = compare_decode(model::ModelConfig::preset("tiny"), GemmType::fp32, 31);
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}

TEST(CudaDecoder, FollowsTheCpuDecoderBf16) {
  TREX_REQUIRE_GPU();
  if (!nn::bf16_matmul_supported()) GTEST_SKIP() << "this CPU lacks AVX512_BF16: no CPU bf16 products to compare with";
  const DecodeParity r = compare_decode(model::ModelConfig::preset("tiny"), GemmType::bf16, 32);
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}

TEST(CudaModel, WithoutGradientsRunsForwardOnly) {
  TREX_REQUIRE_GPU();
  const model::ModelConfig cfg = model::ModelConfig::preset("tiny");
  ModelOptions o;
  o.activation_bytes = size_t(1) << 30;
  o.gradients = false;
  Model m(cfg, o);
  model::init_params(m.host(), cfg, 3);
  m.upload();
  EXPECT_EQ(m.device_grads(), nullptr);
  std::vector<int32_t> tokens(64);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = int32_t((i * 37) % size_t(cfg.vocab_size));
  const model::Batch b{1, 64, tokens.data(), nullptr, nullptr};
  const model::Losses L = m.forward(b);
  EXPECT_TRUE(std::isfinite(L.total));
  try {
    m.forward_backward(b);
    ADD_FAILURE() << "forward_backward ran without gradients";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("built without them"), std::string::npos) << e.what();
  }
}
