// gpu-labelled: the GPU model against the CPU model on the tiny preset (model_parity.hpp): one step's losses and
// gradients (fp32 products: the note below says why not bf16); training loss curves (8 AdamW, 20 Muon steps) with
// a resume across devices;
// the trainer's device step (gradient accumulation, clipped norm, state in the checkpoint layout) against the CPU's;
// the GPU decoder against the CPU decoder; expert parallelism (ranks as threads) and pipeline stages against one
// process, and the placements and expert groups the GPU model refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "model/config.hpp"
#include "model_parity.hpp"
#include "cuda/gpu_decode.hpp"
#include "cuda/gpu_model.hpp"
#include "model/model.hpp"
#include "model/process_group.hpp"
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

// No whole-model bf16 parity: bf16 rounding flips near ties between any two implementations — the CPU bf16
// model against itself with its weights scaled by 1 + 1e-7 already moves a block's expert loads and puts 0.53
// into an expert's gradient (measured here, 2026-12-04) — so no bound that a correct GPU model always meets would
// still catch anything. The bf16 kernels are held op by op (ops_test, experts_test) against the CPU's bf16 recipe.

TEST(CudaModel, TinyStepWithDenseIndexerWarmup) {
  TREX_REQUIRE_GPU();
  model::ModelConfig cfg = model::ModelConfig::preset("tiny");
  cfg.indexer_dense_warmup = true;
  const StepParity r = compare_step(cfg, GemmType::fp32, 11, 2, 64);
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}

// 8 AdamW steps: the CPU against itself with its weights scaled by 1 + 1e-6 (about the GPU's rounding difference)
// drifts past 2^-8 between steps 12 and 18 at this learning rate and stays within 3e-4 up to step 8 (measured
// here); Muon's curve stays within 3.6e-4 over 20.
TEST(CudaModel, EightAdamWStepsFollowTheCpuCurveAndResumeAcrossDevices) {
  TREX_REQUIRE_GPU();
  const CurveParity r =
      compare_training(model::ModelConfig::preset("tiny"), GemmType::fp32, train::OptimizerKind::AdamW, 8, 3e-3, 5, 2,
                       64);
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
                                                train::OptimizerKind::AdamW, 4, 2, 0.05, 1e-3, 21, 2, 64);
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

// The trainer's device step with its micro-batches through the pipeline-stage interface (train::RecomputingStage
// over the GPU model: later backwards recompute their forwards, the indexer's gradients not added twice; rows of
// 96 so that the indexer selects) follows the CPU step like the plain accumulation does.
TEST(CudaModel, TrainerDeviceStepThroughAStageFollowsTheCpuStep) {
  TREX_REQUIRE_GPU();
  const TrainStepParity r = compare_train_steps(model::ModelConfig::preset("tiny"), GemmType::fp32,
                                                train::OptimizerKind::AdamW, 4, 3, 0.05, 1e-3, 23, 2, 96, true);
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}

// The CUDA step under data parallelism with ZeRO-1 (two ranks on the one device: host-staged all-reduce and
// all-gather, NCCL where each has a GPU of its own; seed 22's first step: the tie margins CudaModelHost checks)
// against the CPU step with ZeRO-1: over one replica region, and over two (the second's shards and all-gather past
// 0, a device group per region, as under --ep / --pp).
TEST(CudaModel, DataParallelZeroStepsFollowTheCpuSteps) {
  TREX_REQUIRE_GPU();
  for (const bool two_regions : {false, true}) {
    const ZeroParity r = compare_zero_data_parallel(model::ModelConfig::preset("tiny"), /*gpu=*/true,
                                                    train::OptimizerKind::AdamW, 2, 3, 0.05, 1e-3, 22, 2, 64,
                                                    two_regions);
    EXPECT_TRUE(r.ok()) << r.str();
    std::printf("%s\n", r.str().c_str());
  }
}

TEST(CudaModel, PipelineStagesFollowOneProcess) {
  TREX_REQUIRE_GPU();
  const PipelineParity r = compare_pipeline_stages(model::ModelConfig::preset("tiny"), GemmType::fp32, 47, 64);
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}

TEST(CudaModel, ExpertParallelRanksFollowOneProcess) {
  TREX_REQUIRE_GPU();
  for (const int ranks : {2, 4}) {  // the tiny preset's 8 experts: 4 or 2 per rank
    const ExpertParallelParity r =
        compare_expert_parallel(model::ModelConfig::preset("tiny"), GemmType::fp32, ranks, 47, 64);
    EXPECT_TRUE(r.ok()) << r.str();
    std::printf("%s\n", r.str().c_str());
  }
}

namespace {
// A group that only answers rank and size: the constructor must refuse before any collective.
class SizeOnlyGroup final : public model::ProcessGroup {
 public:
  SizeOnlyGroup(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_reduce_sum(std::span<float>) override { fail(); }
  void all_reduce_sum(std::span<double>) override { fail(); }
  void all_to_all_rows(const float*, std::span<const int64_t>, float*, std::span<const int64_t>, int64_t) override {
    fail();
  }
  void all_to_all_counts(std::span<const int64_t>, std::span<int64_t>) override { fail(); }
  void all_gather_ranges(std::span<float>, std::span<const int64_t>, std::span<const int64_t>) override { fail(); }

 private:
  [[noreturn]] static void fail() { throw Error("SizeOnlyGroup: no collectives expected"); }
  int rank_, size_;
};

std::string construction_error(const model::ModelConfig& cfg, const ModelOptions& o) {
  try {
    Model m(cfg, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(CudaModel, RefusesPlacementsWithoutWhatTheStageRunsAndMismatchedExpertGroups) {
  TREX_REQUIRE_GPU();
  const model::ModelConfig cfg = model::ModelConfig::preset("tiny");  // 8 routed experts
  auto own_experts = [](int rank, int per_rank) -> model::ParamPlacement {
    return [=](const std::string& name) {
      const auto at = name.find(".ffn.experts.");
      if (at == std::string::npos) return 0;
      return std::stoi(name.substr(at + 13)) / per_rank == rank ? 1 : -1;
    };
  };
  ModelOptions o;
  o.activation_bytes = size_t(64) << 20;
  {  // the whole model (the last stage) without its head
    ModelOptions p = o;
    p.placement = [](const std::string& name) { return name == "head.weight" ? -1 : 0; };
    EXPECT_NE(construction_error(cfg, p).find("leaves out head.weight"), std::string::npos);
  }
  {  // a first stage may leave the head to the last one, but not its own layers
    ModelOptions p = o;
    p.first_layer = 0;
    p.end_layer = 1;
    p.placement = [](const std::string& name) { return name.rfind("layers.1.", 0) == 0 || name == "head.weight" ? -1 : 0; };
    EXPECT_EQ(construction_error(cfg, p), "");
    p.placement = [](const std::string& name) { return name.rfind("layers.0.attn", 0) == 0 ? -1 : 0; };
    EXPECT_NE(construction_error(cfg, p).find("which the stage of layers [0, 1) runs"), std::string::npos);
    p.end_layer = 0;
    EXPECT_NE(construction_error(cfg, p).find("are not a stage"), std::string::npos);
  }
  {  // 8 experts over 3 ranks
    SizeOnlyGroup g(0, 3);
    ModelOptions p = o;
    p.expert_group = &g;
    EXPECT_NE(construction_error(cfg, p).find("do not split evenly over 3"), std::string::npos);
  }
  {  // rank 0 of the group given rank 1's experts
    SizeOnlyGroup g(0, 2);
    ModelOptions p = o;
    p.expert_group = &g;
    p.placement = own_experts(1, 4);
    EXPECT_NE(construction_error(cfg, p).find("placement and expert group disagree"), std::string::npos);
  }
  {  // experts left out with no expert group
    ModelOptions p = o;
    p.placement = own_experts(0, 4);
    EXPECT_NE(construction_error(cfg, p).find("placement and expert group disagree"), std::string::npos);
  }
  {  // the right shard is accepted, holds half the experts, and the decoder refuses it
    SizeOnlyGroup g(1, 2);
    ModelOptions p = o;
    p.expert_group = &g;
    p.placement = own_experts(1, 4);
    Model m(cfg, p);
    EXPECT_TRUE(m.host().sharded());
    EXPECT_LT(m.numel(), m.host().canonical_numel());
    try {
      Decoder d(m, DecoderOptions{});
      ADD_FAILURE() << "the decoder accepted a model without every expert";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("must hold every expert"), std::string::npos) << e.what();
    }
  }
}

TEST(CudaDecoder, FollowsTheCpuDecoderAtEveryPosition) {
  TREX_REQUIRE_GPU();
  const DecodeParity r = compare_decode(model::ModelConfig::preset("tiny"), GemmType::fp32, 31);
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}

// No bf16 decoder parity: the CPU decoder has no bf16 path (trex generate refuses --matmul bf16 on the CPU; its
// batch-invariant steps give the experts a bf16-only operand the fp32 GEMM refuses), and bf16 rounding flips near
// ties anyway (a 1e-7 perturbation of the CPU model moves logits by 0.24 there). compare_decode refuses it.
TEST(CudaDecoder, RefusesBf16Parity) {
  try {
    compare_decode(model::ModelConfig::preset("tiny"), GemmType::bf16, 32);
    FAIL() << "compare_decode accepted bf16";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no bf16 path"), std::string::npos) << e.what();
  }
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
