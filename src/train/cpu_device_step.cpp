// The CPU implementation of the device step (cpu_device_step.hpp).
#include "train/cpu_device_step.hpp"

#include <algorithm>
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
    : cfg_(checked(cfg)),
      model_(cfg.model, cfg.data_group, cfg.placement),  // the group: reduce_gradients, update_gate_bias
      zero_(cfg, model_.store()) {
  if (cfg.matmul == "bf16") bf16_.emplace();  // throws when this CPU lacks AVX512_BF16
  if (cfg.expert_group) model_.set_expert_group(cfg.expert_group);
  optimizer_ = std::make_unique<Optimizer>(
      zero_.owned(optimizer_slots(model_, cfg.freeze_router, updated_, cfg.indexer_only)),
      int64_t(model_.params().size()), cfg.optimizer);
  if (cfg.run_stages && !cfg.gradient_regions) throw Error("internal: a pipeline stage without its gradient regions");
  if (cfg.run_stages) {
    single_.emplace(model_, cfg.first_layer, cfg.end_layer < 0 ? cfg.model.num_hidden_layers : cfg.end_layer);
    stage_.emplace(*single_);
  }
  if (cfg.gradient_regions) {
    regions_ = cfg.gradient_regions(model_.store());
    updated_by_region_ = ranges_by_region(updated_, regions_);
  }
}

std::string CpuDeviceStep::describe() const {
  std::string s = std::string("cpu (the reference device step), ") + (cfg_.matmul == "bf16" ? "bf16" : "fp32") +
                  " products";
  for (const StepRegions::Region& r : zero_.regions())
    if (r.sharded()) return s + ", optimizer state ZeRO-1 sharded over the replicas";
  return s;
}

model::Losses CpuDeviceStep::accumulate(std::span<const model::Batch> micro) {
  if (regions_.empty()) return accumulate_gradients(model_, micro);
  // accumulate_gradients with the reduction per replica region (the experts' and stages' replicas are not every
  // rank), the micro-batches through the pipeline stage under --pp
  model_.zero_grad();
  model::Losses sum;
  const double inv = 1.0 / double(micro.size());
  if (cfg_.run_stages)
    sum = cfg_.run_stages(*stage_, micro);
  else
    for (const auto& b : micro) sum.add_weighted(model_.forward_backward(b), inv);
  if (micro.size() > 1) model_.scale_grads(float(inv));
  const std::span<float> g = model_.grads();
  for (const GradientRegion& r : regions_)
    if (r.holders() > 1) r.replicas->all_reduce_sum(g.subspan(size_t(r.begin), size_t(r.end - r.begin)));
  if (cfg_.data_ranks > 1) model_.scale_grads(1.0f / float(cfg_.data_ranks));
  return sum;
}

void CpuDeviceStep::FirstSlotStage::output(std::span<float> out) {
  const auto x = model_.stage_output(0);
  if (x.size() != out.size()) throw Error("internal: a stage's output of " + std::to_string(x.size()) + " floats");
  std::copy(x.begin(), x.end(), out.begin());
}

void CpuDeviceStep::FirstSlotStage::backward(const float* output_grad, std::span<float> input_grad) {
  const auto dx = model_.stage_backward(0, output_grad);
  if (dx.size() != input_grad.size())
    throw Error("internal: a stage's input gradient of " + std::to_string(dx.size()) + " floats");
  std::copy(dx.begin(), dx.end(), input_grad.begin());
}

void CpuDeviceStep::poison_gradient(int64_t offset) {
  model_.grads()[size_t(offset)] = std::numeric_limits<float>::quiet_NaN();
}

double CpuDeviceStep::grad_norm() {
  if (regions_.empty()) return std::sqrt(grad_sq_sum(model_.grads(), updated_));
  // each element once over the world: a region's squares divided by the ranks that hold the same values
  std::vector<double> sq = {0.0};
  for (size_t r = 0; r < regions_.size(); ++r)
    sq[0] += grad_sq_sum(model_.grads(), updated_by_region_[r]) / double(regions_[r].holders());
  if (cfg_.data_group) cfg_.data_group->all_reduce_sum(std::span<double>(sq));
  return std::sqrt(sq[0]);
}

double CpuDeviceStep::update(double norm, double clip, double lr) {
  const double scale = clip_scale(norm, clip);
  optimizer_->step(model_.params(), model_.grads(), lr, float(scale));
  for (const StepRegions::Region& r : zero_.regions())  // ZeRO-1: every replica's updated shard to every replica
    if (r.sharded())
      r.region.replicas->all_gather_ranges(
          model_.params().subspan(size_t(r.region.begin), size_t(r.region.end - r.region.begin)), r.offset, r.count);
  return scale;
}

// In host()'s layout (zeros outside this rank's shards under ZeRO-1); the trainer maps it to the canonical one.
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
  return {{"rank", cfg_.data_group ? cfg_.data_group->rank() : 0},
          {"device", "cpu"},
          {"param_bytes", p},
          {"grad_bytes", g},
          {"optimizer_bytes", o},
          {"activation_bytes", 0},
          {"total_bytes", p + g + o}};
}

}  // namespace trex::train
