// DeviceOptimizer (device_optimizer.hpp): train::Optimizer's bookkeeping over device buffers, its updates through
// cuda/optimizer.hpp's kernels.
#include "cuda/device_optimizer.hpp"

#include <algorithm>

#include "cuda/check.hpp"
#include "cuda/optimizer.hpp"
#include "util/error.hpp"

namespace trex::cuda {

DeviceOptimizer::DeviceOptimizer(std::vector<train::TensorSlot> tensors, int64_t total_numel,
                                 train::OptimizerConfig config, GemmType ns_type)
    : tensors_(std::move(tensors)), cfg_(config), layout_(tensors_, cfg_), ns_type_(ns_type) {
  size_t scratch = 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const train::TensorSlot& t = tensors_[i];
    if (t.offset < 0 || t.offset + t.numel > total_numel)
      throw Error("device optimizer: tensor " + t.name + " out of range");
    if (layout_.muon[i]) scratch = std::max(scratch, muon_scratch_bytes(t.rows, t.cols, ns_type_));
  }
  const int64_t nm = layout_.m_size, nv = layout_.v_size;
  m_ = DeviceBuffer(sizeof(float) * size_t(std::max<int64_t>(1, nm)));
  v_ = DeviceBuffer(sizeof(float) * size_t(std::max<int64_t>(1, nv)));
  TREX_CUDA_CHECK(cudaMemset(m_.as<float>(), 0, m_.bytes()));
  TREX_CUDA_CHECK(cudaMemset(v_.as<float>(), 0, v_.bytes()));
  // the memsets ran on the legacy stream, which the step's non-blocking stream is not ordered after
  TREX_CUDA_CHECK(cudaStreamSynchronize(0));
  if (scratch > 0) scratch_ = std::make_unique<DeviceArena>(scratch, "muon scratch");
}

void DeviceOptimizer::step(Blas& blas, float* params, const float* grads, double lr, float grad_scale,
                           uint16_t* params_bf16, cudaStream_t stream) {
  ++t_;
  MuonSettings ms;
  ms.momentum = cfg_.muon_momentum;
  ms.weight_decay = cfg_.muon_weight_decay;
  ms.nesterov = cfg_.muon_nesterov;
  ms.scale = cfg_.muon_scale;
  ms.ns_steps = cfg_.muon_ns_steps;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const train::TensorSlot& t = tensors_[i];
    if (!t.trainable) continue;
    float* p = params + t.offset;
    const float* g = grads + t.offset;
    uint16_t* p16 = params_bf16 ? params_bf16 + t.offset : nullptr;
    float* m = m_.as<float>() + layout_.m_off[i];
    if (layout_.muon[i]) {
      muon_update(blas, p, g, m, t.rows, t.cols, lr, grad_scale, ms, ns_type_, p16, *scratch_, stream);
    } else {
      const double wd = (t.ndim >= 2 || cfg_.decay_1d) ? cfg_.weight_decay : 0.0;  // train::Optimizer's rule
      const AdamWConstants c = adamw_constants(lr, t_, cfg_.beta1, cfg_.beta2, cfg_.eps, wd);
      adamw_update(p, g, m, v_.as<float>() + layout_.v_off[i], t.numel, grad_scale, c, p16, stream);
    }
  }
}

void DeviceOptimizer::download_state(std::span<float> m, std::span<float> v, cudaStream_t stream) const {
  const int64_t nm = layout_.m_size, nv = layout_.v_size;
  if (int64_t(m.size()) != nm || int64_t(v.size()) != nv)
    throw Error("device optimizer: state of " + std::to_string(nm) + " + " + std::to_string(nv) +
                " floats, asked into " + std::to_string(m.size()) + " + " + std::to_string(v.size()));
  TREX_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (nm) m_.download(m.data(), sizeof(float) * size_t(nm));
  if (nv) v_.download(v.data(), sizeof(float) * size_t(nv));
}

void DeviceOptimizer::upload_state(std::span<const float> m, std::span<const float> v, cudaStream_t stream) {
  const int64_t nm = layout_.m_size, nv = layout_.v_size;
  if (int64_t(m.size()) != nm || int64_t(v.size()) != nv)
    throw Error("device optimizer: state of " + std::to_string(nm) + " + " + std::to_string(nv) +
                " floats, given " + std::to_string(m.size()) + " + " + std::to_string(v.size()));
  TREX_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (nm) m_.upload(m.data(), sizeof(float) * size_t(nm));
  if (nv) v_.upload(v.data(), sizeof(float) * size_t(nv));
}

}  // namespace trex::cuda
