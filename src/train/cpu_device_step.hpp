// train::DeviceStep on the CPU: the CPU model and train::Optimizer behind the device interface, with the
// arithmetic of the trainer's one-process CPU path (accumulate_gradients; the norm of grad_sq_sum over the updated
// tensors; clip_scale; Optimizer::step; update_gate_bias — what ShardedOptimizer does with one region and no
// group), so a run through it writes the bytes of a plain CPU run (tests/train/trainer_test.cpp). It needs no MPI,
// so the standalone GPU build has it too. It is the reference the CUDA step is compared with
// (tests/cuda/gpu/model_parity.cpp) and what the CPU tests drive the trainer's device branch with
// (tests/train/trainer_test.cpp, tests/train/device_stage_test.cpp, and under MPI tests/dist/train_layout_test.cpp:
// --dp, --ep, --pp); `trex train --device cpu` keeps the trainer's own path.
#pragma once
#include <memory>
#include <optional>

#include "nn/gemm_bf16.hpp"

#include "train/device_step.hpp"
#include "train/optimizer.hpp"
#include "train/recompute_stage.hpp"
#include "train/train_step.hpp"

namespace trex::train {

class CpuDeviceStep : public DeviceStep {
 public:
  explicit CpuDeviceStep(const DeviceStepConfig& cfg);

  std::string describe() const override;
  model::ParamStore& host() override { return model_.store(); }
  void upload() override {}    // the host copy is the model's own store
  void download() override {}
  model::Losses accumulate(std::span<const model::Batch> micro) override;
  void poison_gradient(int64_t offset) override;
  double grad_norm() override;
  double update(double norm, double clip, double lr) override;
  void update_gate_bias() override { model_.update_gate_bias(); }
  int64_t n_moe_blocks() const override { return model_.n_moe_blocks(); }
  std::span<const int64_t> expert_load(int64_t block) const override { return model_.expert_load(block); }
  int64_t optimizer_steps() const override { return optimizer_->steps(); }
  void set_optimizer_steps(int64_t t) override { optimizer_->set_steps(t); }
  void get_state(std::vector<float>& m, std::vector<float>& v) override;
  void set_state(std::span<const float> m, std::span<const float> v) override;
  TensorRanges checkpoint_ranges() const override { return zero_.checkpoint_ranges(); }
  nlohmann::json memory() const override;

  model::Model& model() { return model_; }
  // --pp: forwards recomputed at their backward so far (0 without a pipeline)
  int64_t recomputed_forwards() const { return stage_ ? stage_->recomputed() : 0; }

 private:
  DeviceStepConfig cfg_;
  std::optional<nn::Bf16MatmulScope> bf16_;  // --matmul bf16: the CPU's bf16 products while this step lives
  model::Model model_;
  TensorRanges updated_;
  StepRegions zero_;  // who updates what (ZeRO-1: this rank's shard of each replica region)
  std::unique_ptr<Optimizer> optimizer_;
  // Model sharding (DeviceStepConfig::gradient_regions): the replica regions and each one's updated tensors (the
  // norm's parts). Empty regions: the whole model on every rank.
  std::vector<GradientRegion> regions_;
  std::vector<TensorRanges> updated_by_region_;
  // --pp: the stage as the GPU step runs it (RecomputingStage over the model's first activation slot), so the
  // CPU tests check the GPU step's pipeline bookkeeping; the CPU model alone would keep every slot.
  class FirstSlotStage final : public SingleBatchStage {
   public:
    FirstSlotStage(model::Model& m, int64_t first, int64_t end) : model_(m), first_(first), end_(end) {}
    const model::ModelConfig& config() const override { return model_.config(); }
    int64_t first_layer() const override { return first_; }
    int64_t end_layer() const override { return end_; }
    model::Losses forward(const model::Batch& batch, const float* input, bool again) override {
      return again ? model_.stage_recompute(0, batch, first_, end_, input)
                   : model_.stage_forward(0, batch, first_, end_, input);
    }
    void output(std::span<float> out) override;
    void backward(const float* output_grad, std::span<float> input_grad) override;

   private:
    model::Model& model_;
    int64_t first_, end_;
  };
  std::optional<FirstSlotStage> single_;
  std::optional<RecomputingStage> stage_;
};

}  // namespace trex::train
