// The CPU implementation of the device step (cpu_device_step.hpp).
#include "train/cpu_device_step.hpp"

#include <limits>

#include "util/error.hpp"

namespace trex::train {

namespace {
const DeviceStepConfig& checked(const DeviceStepConfig& cfg) {
  if (cfg.matmul != "fp32" && cfg.matmul != "bf16") throw Error("--matmul must be fp32 or bf16, not '" + cfg.matmul + "'");
  return cfg;
}
}  // namespace

CpuDeviceStep::CpuDeviceStep(const DeviceStepConfig& cfg) : cfg_(checked(cfg)), model_(cfg.model) {
  if (cfg.matmul == "bf16") bf16_.emplace();  // throws when this CPU lacks AVX512_BF16
  const int64_t n = int64_t(model_.params().size());
  optimizer_ = std::make_unique<ShardedOptimizer>(
      model_.store(), optimizer_slots(model_, cfg.freeze_router, updated_, cfg.indexer_only),
      std::vector<dist::ParamRegion>{{0, n, nullptr, dist::kStageGroup}}, cfg.optimizer, /*zero=*/true, nullptr);
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

double CpuDeviceStep::grad_norm() { return optimizer_->grad_norm(model_.grads()); }

double CpuDeviceStep::update(double norm, double clip, double lr) {
  return optimizer_->update(model_.params(), model_.grads(), norm, clip, lr);
}

void CpuDeviceStep::get_state(std::vector<float>& m, std::vector<float>& v) {
  ShardedOptimizer::Canonical c = optimizer_->gather_canonical(model_.store(), cfg_.model, 0);
  m = std::move(c.m);
  v = std::move(c.v);
}

void CpuDeviceStep::set_state(std::span<const float> m, std::span<const float> v) {
  optimizer_->load_state(m, v, model_.store());
}

nlohmann::json CpuDeviceStep::memory() const {
  const int64_t p = int64_t(model_.store().params().size()) * 4, g = int64_t(model_.store().grads().size()) * 4,
                o = optimizer_->state_floats() * 4;
  return {{"rank", 0},          {"device", "cpu"},       {"param_bytes", p},     {"grad_bytes", g},
          {"optimizer_bytes", o}, {"activation_bytes", 0}, {"total_bytes", p + g + o}};
}

}  // namespace trex::train
