// The CUDA implementation of the trainer's device step (gpu_train_step.hpp).
#include "cuda/gpu_train_step.hpp"

#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cuda/blas.hpp"
#include "cuda/check.hpp"
#include "cuda/device.hpp"
#include "cuda/device_group.hpp"
#include "cuda/device_optimizer.hpp"
#include "cuda/gpu_model.hpp"
#include "cuda/grad_norm.hpp"
#include "cuda/model_glue.hpp"
#include "cuda/ops.hpp"
#include "cuda/stream.hpp"
#include "train/recompute_stage.hpp"
#include "train/train_step.hpp"
#include "util/error.hpp"

namespace trex::cuda {

namespace {

GemmType gemm_type(const std::string& matmul) {
  if (matmul == "fp32") return GemmType::fp32;
  if (matmul == "bf16") return GemmType::bf16;
  throw Error("--matmul must be fp32 or bf16, not '" + matmul + "'");
}

model::ProcessGroup* data_parallel(const train::DeviceStepConfig& c) {
  return c.data_group && c.data_group->size() > 1 ? c.data_group : nullptr;
}

ModelOptions model_options(const train::DeviceStepConfig& c) {
  ModelOptions o;
  o.matmul = gemm_type(c.matmul);
  // The optimizer's state comes after the model, and ranks that share a device (the 2-rank checks on one GPU)
  // split it: each taking 85 % of what is free, two that look before either allocates would make the second's
  // allocation fail.
  o.later_bytes_per_param = kOptimizerBytesPerParam;
  if (const model::ProcessGroup* pg = data_parallel(c)) o.device_sharers = ranks_on_device(pg->size(), pg->rank());
  o.placement = c.placement;  // --ep / --pp: this rank's stage and experts only
  o.expert_group = c.expert_group;
  o.first_layer = c.first_layer;
  o.end_layer = c.end_layer;
  return o;
}

// The GPU model as one micro-batch's stage (it keeps one batch's activations): what train::RecomputingStage
// turns into the pipeline's stage model.
class GpuSingleBatchStage final : public train::SingleBatchStage {
 public:
  explicit GpuSingleBatchStage(Model& m) : model_(m) {}
  const model::ModelConfig& config() const override { return model_.config(); }
  int64_t first_layer() const override { return model_.first_layer(); }
  int64_t end_layer() const override { return model_.end_layer(); }
  model::Losses forward(const model::Batch& batch, const float* input, bool again) override {
    return model_.stage_forward(batch, input, again);
  }
  void output(std::span<float> out) override { model_.stage_output(out); }
  void backward(const float* output_grad, std::span<float> input_grad) override {
    model_.stage_backward(output_grad, input_grad);
  }

 private:
  Model& model_;
};

class GpuTrainStep : public train::DeviceStep {
 public:
  explicit GpuTrainStep(const train::DeviceStepConfig& c)
      : cfg_(c),
        device_(data_parallel(c) ? select_device_for_rank(c.data_group->rank()) : 0),  // before any allocation
        model_(c.model, model_options(c)),
        zero_(c, model_.host()),
        slots_(train::optimizer_slots(model_.host().table(), c.freeze_router, updated_, c.indexer_only)),
        owned_(zero_.owned(slots_)),
        opt_(owned_, model_.numel(), c.optimizer, gemm_type(c.matmul)),
        norm_(updated_),
        pg_(data_parallel(c)),
        single_(model_),
        stage_(single_) {
    if (c.run_stages && !c.gradient_regions) throw Error("internal: a pipeline stage without its gradient regions");
    if (c.gradient_regions) {  // --ep / --pp: each replica region summed over its own replicas (cpu_device_step.cpp)
      regions_ = c.gradient_regions(model_.host());
      const int job_ranks = c.data_group ? c.data_group->size() : 1;
      for (const train::GradientRegion& r : regions_)
        region_groups_.push_back(r.holders() > 1 ? make_device_group(*r.replicas, r.end - r.begin, job_ranks)
                                                 : nullptr);
      for (const train::TensorRanges& part : train::ranges_by_region(updated_, regions_))
        norm_parts_.emplace_back(part);
    } else if (pg_) {
      group_ = make_device_group(*pg_, model_.numel(), pg_->size());
    }
  }

  std::string describe() const override {
    const Availability& a = availability();
    std::string s = fmt::format("cuda {} ({} products, activation arena {:.2f} GiB)", a.name, cfg_.matmul,
                                double(model_.activation_capacity()) / double(1ull << 30));
    if (group_)
      s += fmt::format(", rank {} of {} on device {}, gradients averaged by {}", pg_->rank(), group_->size(), device_,
                       group_->name());
    if (!regions_.empty()) {
      s += fmt::format(", rank {} of {} on device {}, experts {} of {} ranks (routed rows staged through the host)",
                       pg_ ? pg_->rank() : 0, pg_ ? pg_->size() : 1, device_,
                       cfg_.expert_group ? cfg_.expert_group->rank() : 0,
                       cfg_.expert_group ? cfg_.expert_group->size() : 1);
      if (cfg_.run_stages)
        s += fmt::format(", pipeline stage of layers [{}, {}) (streams through the host, a slot's forward "
                         "recomputed at its backward when another came between)",
                         model_.first_layer(), model_.end_layer());
      for (const auto& g : region_groups_)
        if (g) {
          s += ", gradients summed by " + g->name();
          break;
        }
    }
    for (const auto& r : zero_.regions())
      if (r.sharded()) {
        s += ", optimizer state ZeRO-1 sharded over the replicas (weights all-gathered after each update)";
        break;
      }
    return s;
  }
  model::ParamStore& host() override { return model_.host(); }
  void upload() override { model_.upload(); }
  void download() override { model_.download(); }

  model::Losses accumulate(std::span<const model::Batch> micro) override {
    model_.zero_grad();
    model::Losses sum;
    const double inv = 1.0 / double(micro.size());
    if (cfg_.run_stages)  // --pp: 1F1B through this rank's stage
      sum = cfg_.run_stages(stage_, micro);
    else
      for (const auto& b : micro) sum.add_weighted(model_.forward_backward(b), inv);
    if (micro.size() > 1) scale_in_place(model_.device_grads(), model_.numel(), float(inv), stream_);  // scale_grads'
    if (group_)  // model::Model::reduce_gradients: the sum over the ranks, then 1 / ranks
      group_->all_reduce_sum(model_.device_grads(), model_.numel(), 1.0f / float(group_->size()), stream_);
    for (size_t i = 0; i < regions_.size(); ++i)  // sharded: each region over its replicas, then 1 / (dp * ep)
      if (region_groups_[i])
        region_groups_[i]->all_reduce_sum(model_.device_grads() + regions_[i].begin,
                                          regions_[i].end - regions_[i].begin, 1.0f, stream_);
    if (!regions_.empty() && cfg_.data_ranks > 1)
      scale_in_place(model_.device_grads(), model_.numel(), 1.0f / float(cfg_.data_ranks), stream_);
    stream_.synchronize();
    return sum;
  }
  void poison_gradient(int64_t offset) override {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // on the step's stream, which the legacy stream of a plain cudaMemcpy would not order before the norm
    TREX_CUDA_CHECK(
        cudaMemcpyAsync(model_.device_grads() + offset, &nan, sizeof nan, cudaMemcpyHostToDevice, stream_.get()));
    stream_.synchronize();  // `nan` lives on this frame
  }
  double grad_norm() override {
    if (regions_.empty()) return std::sqrt(norm_(model_.device_grads(), stream_));
    // each element once over the world: a region's squares divided by the ranks that hold the same values
    std::vector<double> sq = {0.0};
    for (size_t r = 0; r < regions_.size(); ++r)
      sq[0] += norm_parts_[r](model_.device_grads(), stream_) / double(regions_[r].holders());
    if (cfg_.data_group) cfg_.data_group->all_reduce_sum(std::span<double>(sq));
    return std::sqrt(sq[0]);
  }
  double update(double norm, double clip, double lr) override {
    const double scale = train::clip_scale(norm, clip);
    float* params = model_.device_params();
    uint16_t* params16 = model_.device_params_bf16();
    opt_.step(blas_, params, model_.device_grads(), lr, float(scale), params16, stream_);
    const auto& zr = zero_.regions();
    for (size_t i = 0; i < zr.size(); ++i) {  // ZeRO-1: every replica's updated shard to every replica
      if (!zr[i].sharded()) continue;
      DeviceGroup& g = regions_.empty() ? *group_ : *region_groups_[i];
      const int64_t b = zr[i].region.begin, n = zr[i].region.end - b;
      g.all_gather_ranges(params + b, zr[i].offset, zr[i].count, stream_);
      if (params16) round_to_bf16(params + b, params16 + b, n, stream_);  // the others' tensors' bf16 copies
    }
    stream_.synchronize();  // the model's stream reads the new weights next
    return scale;
  }
  void update_gate_bias() override { model_.update_gate_bias(-1, pg_); }
  int64_t n_moe_blocks() const override { return model_.n_moe_blocks(); }
  std::span<const int64_t> expert_load(int64_t block) const override { return model_.expert_load(block); }
  int64_t optimizer_steps() const override { return opt_.steps(); }
  void set_optimizer_steps(int64_t t) override { opt_.set_steps(t); }

  void get_state(std::vector<float>& m, std::vector<float>& v) override {
    std::vector<float> cm(size_t(opt_.state_m_size())), cv(size_t(opt_.state_v_size()));
    opt_.download_state(cm, cv, stream_);
    opt_.layout().expand(owned_, cm, cv, m, v, model_.numel());
  }
  void set_state(std::span<const float> m, std::span<const float> v) override {
    if (int64_t(m.size()) != model_.numel() || int64_t(v.size()) != model_.numel())
      throw Error(fmt::format("optimizer state of {} + {} floats, the model needs {} each", m.size(), v.size(),
                              model_.numel()));
    std::vector<float> cm(size_t(opt_.state_m_size())), cv(size_t(opt_.state_v_size()));
    opt_.layout().compact(owned_, m, v, cm, cv);
    opt_.upload_state(cm, cv, stream_);
  }
  train::TensorRanges checkpoint_ranges() const override { return zero_.checkpoint_ranges(); }

  nlohmann::json memory() const override {
    const int64_t n = model_.numel();
    const int64_t p = n * 4 + (cfg_.matmul == "bf16" ? n * 2 : 0), g = n * 4,
                  o = (opt_.state_m_size() + opt_.state_v_size()) * 4, a = int64_t(model_.activation_capacity());
    return {{"rank", pg_ ? pg_->rank() : 0}, {"device", "cuda"},      {"param_bytes", p},     {"grad_bytes", g},
            {"optimizer_bytes", o}, {"activation_bytes", a}, {"total_bytes", p + g + o + a}};
  }

 private:
  train::DeviceStepConfig cfg_;
  int device_ = 0;
  Model model_;
  train::StepRegions zero_;  // who updates what (ZeRO-1: this rank's shard of each replica region)
  train::TensorRanges updated_;
  std::vector<train::TensorSlot> slots_, owned_;  // every tensor; those of this rank's shards (the optimizer's)
  DeviceOptimizer opt_;
  SquareSum norm_;
  Blas blas_;
  Stream stream_;
  model::ProcessGroup* pg_ = nullptr;  // data parallelism: the ranks (expert loads); null in one process
  std::unique_ptr<DeviceGroup> group_;  // and the gradient all-reduce over them
  // sharded (--ep, --pp): the replica regions, a device group for each that has other replicas, the norm's parts
  std::vector<train::GradientRegion> regions_;
  std::vector<std::unique_ptr<DeviceGroup>> region_groups_;
  std::vector<SquareSum> norm_parts_;
  GpuSingleBatchStage single_;      // --pp: this rank's stage, one micro-batch at a time,
  train::RecomputingStage stage_;   // and as the pipeline drives it (a slot's forward recomputed at its backward)
};

}  // namespace

std::unique_ptr<train::DeviceStep> make_gpu_train_step(const train::DeviceStepConfig& cfg) {
  return std::make_unique<GpuTrainStep>(cfg);
}

}  // namespace trex::cuda
