// Optimisers over a flat parameter buffer (llm.c style): AdamW, and Muon with DeepSeek-V4's hybrid
// Newton-Schulz schedule for matrices (AdamW for embedding, head(s), norms, mHC base/scale, sinks,
// biases — DEEPSEEK_V4.md §9). State lives in flat buffers allocated once; step() allocates nothing. Only what
// an update reads is allocated: first moments / momentum for trainable tensors, second moments for the trainable
// tensors AdamW updates (not for Muon's matrices, not for frozen tensors or buffers such as the gate biases).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace trex::train {

enum class OptimizerKind { AdamW, Muon };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::AdamW;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // the report's launchers
  double weight_decay = 0.01;
  bool decay_1d = false;       // Megatron's default: 1-D tensors (norms, biases) get no weight decay
  double muon_momentum = 0.95;
  double muon_weight_decay = 0.1;
  bool muon_nesterov = true;
  double muon_scale = 0.18;    // O = NS(.) * sqrt(max(rows, cols)) * 0.18
  int muon_ns_steps = 10;      // steps 1-8: (3.4445, -4.7750, 2.0315); 9-10: (2, -1.5, 0.5)
};

OptimizerKind parse_optimizer(const std::string& name);  // "adamw" | "muon"; throws trex::Error
const char* to_string(OptimizerKind k);

// One tensor as the optimiser sees it.
struct TensorSlot {
  std::string name;
  int64_t offset = 0, numel = 0;
  int64_t rows = 1, cols = 1;  // matrix view: [shape[0], prod(shape[1:])]
  int ndim = 1;
  bool trainable = true;
};

// True when DeepSeek-V4's split puts the tensor on AdamW even under Muon.
bool uses_adamw_under_muon(const TensorSlot& t);

// The compact state layout (Optimizer::state_m / state_v, and the device optimizer's, cuda/device_optimizer.hpp):
// per tensor, whether Muon updates it and where its first moment / momentum (m) and its AdamW second moment (v)
// start, -1 where it keeps none; tensors in slot order, trainable ones only.
struct StateLayout {
  StateLayout(const std::vector<TensorSlot>& tensors, const OptimizerConfig& config);
  std::vector<bool> muon;
  std::vector<int64_t> m_off, v_off;
  int64_t m_size = 0, v_size = 0;
  // Between the compact layout and the checkpoints' (one buffer per moment over the whole flat parameter buffer,
  // tensor i's slice at its offset, zeros where it keeps none; the flat buffers hold `total_numel` floats).
  void expand(const std::vector<TensorSlot>& tensors, std::span<const float> m, std::span<const float> v,
              std::vector<float>& flat_m, std::vector<float>& flat_v, int64_t total_numel) const;
  void compact(const std::vector<TensorSlot>& tensors, std::span<const float> flat_m, std::span<const float> flat_v,
               std::span<float> m, std::span<float> v) const;
};

class Optimizer {
 public:
  Optimizer(std::vector<TensorSlot> tensors, int64_t total_numel, OptimizerConfig config);

  // One update with learning rate lr (schedule applied by the caller) from grads * grad_scale (the clipping
  // factor, applied as each gradient is read: no pass of its own over the gradients). grads are read only.
  void step(std::span<float> params, std::span<const float> grads, double lr, float grad_scale = 1.0f);

  int64_t steps() const { return t_; }
  const OptimizerConfig& config() const { return cfg_; }
  const std::vector<TensorSlot>& tensors() const { return tensors_; }
  // Which tensors Muon updates (for logs and tests).
  bool is_muon(std::size_t tensor_index) const { return layout_.muon[tensor_index]; }
  const StateLayout& layout() const { return layout_; }

  // State for exact resume: first/second moments (AdamW) and momentum (Muon) share `m`; `v` is AdamW only.
  // Compact buffers: moment(i, 0) / moment(i, 1) is tensor i's slice of m / v, empty where it keeps none.
  // (Checkpoints keep the flat-buffer layout with zeros there: train/sharded_optimizer.hpp lays the state out.)
  std::span<float> state_m() { return m_; }
  std::span<float> state_v() { return v_; }
  std::span<float> moment(std::size_t tensor_index, int which);
  std::span<const float> moment(std::size_t tensor_index, int which) const {
    return const_cast<Optimizer*>(this)->moment(tensor_index, which);
  }
  void set_steps(int64_t t) { t_ = t; }

 private:
  void adamw_tensor(std::size_t i, float* p, const float* g, float gs, double lr);
  void muon_tensor(std::size_t i, float* p, const float* g, float gs, double lr);

  std::vector<TensorSlot> tensors_;
  OptimizerConfig cfg_;
  StateLayout layout_;
  std::vector<float> m_, v_;
  // Newton-Schulz workspace, sized for the largest matrix once.
  std::vector<float> x_, a_, b_, tmp_;
  int64_t t_ = 0;
};

// Newton-Schulz orthogonalisation of a rows x cols matrix in place (readable reference; used by Muon and
// tested on its own): normalise by the Frobenius norm, work on the wide orientation, apply the hybrid schedule.
void newton_schulz_reference(std::vector<float>& x, int64_t rows, int64_t cols, int steps);

// Warm-up then cosine decay to min_lr (the report's launchers); constant after total_steps.
double lr_at(int64_t step, int64_t warmup_steps, int64_t total_steps, double max_lr, double min_lr);

}  // namespace trex::train
