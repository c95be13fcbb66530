// The CPU implementation of the device step (cpu_device_step.hpp).
#include "train/cpu_device_step.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "util/error.hpp"

namespace trex::train {

namespace {
const DeviceStepConfig& checked(const DeviceStepConfig& cfg) {
  if (cfg.matmul != "fp32" && cfg.matmul != "bf16") throw Error("--matmul must be fp32 or bf16, not '" + cfg.matmul + "'");
  return cfg;
}
}  // namespace

CpuDeviceStep::CpuDeviceStep(const DeviceStepConfig& cfg)
    : cfg_(checked(cfg)), model_(cfg.model, cfg.data_group) {  // the group: reduce_gradients, update_gate_bias
  if (cfg.matmul == "bf16") bf16_.emplace();  // throws when this CPU lacks AVX512_BF16
  optimizer_ = std::make_unique<Optimizer>(optimizer_slots(model_, cfg.freeze_router, updated_, cfg.indexer_only),
                                           int64_t(model_.params().size()), cfg.optimizer);
}

std::string CpuDeviceStep::describe() const {
  return std::string("cpu (the reference device step), ") + (cfg_.matmul == "bf16" ? "bf16" : "fp32") + " products";
}

model::Losses CpuDeviceStep::accumulate(std::span<const model::Batch> micro) {
  return accumulate_gradients(model_, micro);
}

void CpuDeviceStep::poison_gradient(int64_t offset) {
  model_.grads()[size_t(offset)] = std::numeric_limits<float>::quiet_NaN();
}

double CpuDeviceStep::grad_norm() { return std::sqrt(grad_sq_sum(model_.grads(), updated_)); }

double CpuDeviceStep::update(double norm, double clip, double lr) {
  const double scale = clip_scale(norm, clip);
  optimizer_->step(model_.params(), model_.grads(), lr, float(scale));
  return scale;
}

// One process, one unsharded store: a tensor's canonical offset is its offset.
void CpuDeviceStep::get_state(std::vector<float>& m, std::vector<float>& v) {
  optimizer_->layout().expand(optimizer_->tensors(), optimizer_->state_m(), optimizer_->state_v(), m, v,
                              int64_t(model_.params().size()));
}

void CpuDeviceStep::set_state(std::span<const float> m, std::span<const float> v) {
  if (m.size() != model_.params().size() || v.size() != m.size())
    throw Error("optimizer state of " + std::to_string(m.size()) + " + " + std::to_string(v.size()) +
                " floats, the model needs " + std::to_string(model_.params().size()) + " each");
  optimizer_->layout().compact(optimizer_->tensors(), m, v, optimizer_->state_m(), optimizer_->state_v());
}

nlohmann::json CpuDeviceStep::memory() const {
  const int64_t p = int64_t(model_.store().params().size()) * 4, g = int64_t(model_.store().grads().size()) * 4,
                o = int64_t(optimizer_->state_m().size() + optimizer_->state_v().size()) * 4;
  return {{"rank", 0},          {"device", "cpu"},       {"param_bytes", p},     {"grad_bytes", g},
          {"optimizer_bytes", o}, {"activation_bytes", 0}, {"total_bytes", p + g + o}};
}

}  // namespace trex::train
