// DeviceOptimizer: train::Optimizer over a device parameter buffer — the same tensor slots, the same split
// (Muon for matrices, AdamW for the rest: train::uses_adamw_under_muon), the same per-tensor constants and
// element-wise formulas (cuda/optimizer.hpp's kernels, each checked against train::Optimizer by the gpu tests) —
// and its state in train::Optimizer's compact layout (first moments / momentum of the trainable tensors, second
// moments of the AdamW ones, in slot order), so that the state moves between devices through state_m / state_v
// (exact resume across devices). State and Muon's scratch are allocated once, at construction. CUDA builds only.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cuda/arena.hpp"
#include "cuda/blas.hpp"
#include "train/optimizer.hpp"

namespace trex::cuda {

// Device bytes per parameter a DeviceOptimizer may allocate: AdamW's m and v (8; Muon's momentum is 4), + 1 for the
// Newton–Schulz scratch and the norm's partials. What a model built before it leaves free
// (ModelOptions::later_bytes_per_param).
inline constexpr double kOptimizerBytesPerParam = 8 + 1;

class DeviceOptimizer {
 public:
  // ns_type: the Newton–Schulz products' operands (fp32, or bf16 as the CPU's --matmul bf16 runs them).
  DeviceOptimizer(std::vector<train::TensorSlot> tensors, int64_t total_numel, train::OptimizerConfig config,
                  GemmType ns_type);
  // One update with learning rate lr from grads * grad_scale (train::Optimizer::step's contract), every updated
  // tensor's bf16 copy rewritten when params_bf16 is given. Queued on `stream`.
  void step(Blas& blas, float* params, const float* grads, double lr, float grad_scale, uint16_t* params_bf16,
            cudaStream_t stream);
  int64_t steps() const { return t_; }
  void set_steps(int64_t t) { t_ = t; }
  const std::vector<train::TensorSlot>& tensors() const { return tensors_; }
  bool is_muon(size_t i) const { return layout_.muon[i]; }
  const train::StateLayout& layout() const { return layout_; }

  // The state in train::Optimizer's state_m() / state_v() layout and sizes (synchronous copies).
  int64_t state_m_size() const { return layout_.m_size; }
  int64_t state_v_size() const { return layout_.v_size; }
  void download_state(std::span<float> m, std::span<float> v, cudaStream_t stream) const;
  void upload_state(std::span<const float> m, std::span<const float> v, cudaStream_t stream);

 private:
  std::vector<train::TensorSlot> tensors_;
  train::OptimizerConfig cfg_;
  train::StateLayout layout_;
  GemmType ns_type_;
  int64_t t_ = 0;
  DeviceBuffer m_, v_;
  std::unique_ptr<DeviceArena> scratch_;  // Muon: momentum copy + Newton–Schulz temporaries of the largest matrix
};

}  // namespace trex::cuda
