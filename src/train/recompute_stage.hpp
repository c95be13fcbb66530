// A pipeline stage over a model that keeps one micro-batch's activations at a time (the GPU model, whose arena is
// reset at every forward): RecomputingStage is the model::StageModel that dist::Pipeline drives (1F1B), and it keeps
// for each activation slot only its micro-batch and input streams (host). A slot's backward first recomputes the
// slot's forward when another forward ran in between — 1F1B's warm-up on the earlier stages; the last stage's
// backward always follows its own forward. The recomputed forward is the same arithmetic on the same inputs, so the
// same activations, expert loads and gradients (the gradients a training forward adds itself, the indexer's, are
// not added again). The device step of the GPU (cuda/gpu_train_step.cpp) and its CPU
// reference (cpu_device_step.cpp, over the CPU model's first slot) both run their stages through it, so the CPU
// tests check this bookkeeping under a real pipeline.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "util/error.hpp"

namespace trex::train {

// One micro-batch's stage forward, output and backward (model::StageModel's contract without slots): backward
// belongs to the latest forward. again: the forward runs once more for its backward, so the gradients a training
// forward adds itself (the indexer's KL loss) must not be added a second time. Streams are host memory
// [B*T, hc_mult, hidden].
class SingleBatchStage {
 public:
  virtual ~SingleBatchStage() = default;
  virtual const model::ModelConfig& config() const = 0;
  virtual int64_t first_layer() const = 0;
  virtual int64_t end_layer() const = 0;
  virtual model::Losses forward(const model::Batch& batch, const float* input, bool again) = 0;
  virtual void output(std::span<float> out) = 0;
  // input_grad: empty on the first stage (its gradient goes into the embedding)
  virtual void backward(const float* output_grad, std::span<float> input_grad) = 0;
};

class RecomputingStage final : public model::StageModel {
 public:
  explicit RecomputingStage(SingleBatchStage& m) : model_(m) {}
  const model::ModelConfig& config() const override { return model_.config(); }

  model::Losses stage_forward(int slot, const model::Batch& batch, int64_t first, int64_t last,
                              const float* input) override {
    if (first != model_.first_layer() || last != model_.end_layer())
      throw Error("pipeline: the stage of layers [" + std::to_string(model_.first_layer()) + ", " +
                  std::to_string(model_.end_layer()) + ") asked for layers [" + std::to_string(first) + ", " +
                  std::to_string(last) + ")");
    Slot& s = at(slot);
    s.batch = batch;
    const size_t n = streams(batch);
    if (input)
      s.input.assign(input, input + n);
    else
      s.input.clear();
    const model::Losses l = model_.forward(batch, input, false);
    if (last < config().num_hidden_layers) {
      s.output.resize(n);
      model_.output(s.output);
    }
    resident_ = slot;
    return l;
  }
  std::span<const float> stage_output(int slot) const override { return slots_.at(size_t(slot)).output; }
  std::span<const float> stage_backward(int slot, const float* output_grad) override {
    Slot& s = at(slot);
    if (resident_ != slot) {  // its activations were overwritten: the same forward again
      (void)model_.forward(s.batch, s.input.empty() ? nullptr : s.input.data(), true);
      ++recomputed_;
    }
    resident_ = -1;
    s.input_grad.resize(model_.first_layer() > 0 ? streams(s.batch) : 0);
    model_.backward(output_grad, s.input_grad);
    return s.input_grad;
  }
  // Forwards run again at their backward since construction (what the warm-up costs).
  int64_t recomputed() const { return recomputed_; }

 private:
  struct Slot {
    model::Batch batch;  // its arrays stay valid until the step's last backward (dist::Pipeline::run)
    std::vector<float> input, output, input_grad;  // host streams, allocated once per slot and reused
  };
  Slot& at(int slot) {
    if (slot < 0 || slot > 4096) throw Error("pipeline: activation slot " + std::to_string(slot) + " out of range");
    if (size_t(slot) >= slots_.size()) slots_.resize(size_t(slot) + 1);  // moves keep the vectors' memory
    return slots_[size_t(slot)];
  }
  size_t streams(const model::Batch& b) const { return size_t(b.B * b.T * config().hc_mult * config().hidden_size); }

  SingleBatchStage& model_;
  std::vector<Slot> slots_;
  int resident_ = -1;  // the slot whose forward activations the model holds
  int64_t recomputed_ = 0;
};

}  // namespace trex::train
