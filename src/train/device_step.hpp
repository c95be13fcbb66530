// The model and optimizer of a one-process `trex train` run on a device (--device cuda): what the step loop asks
// of them. The trainer keeps everything that is not arithmetic on the weights — data order, LR schedule, spike
// guard, NaN check, metrics, checkpoints and resume — so a run on a device writes the same files, resumes the same
// way and resumes from (or into) a CPU run's checkpoints. CpuDeviceStep (cpu_device_step.hpp) implements this
// over the CPU model and optimizer with exactly the trainer's own calls: the oracle the CUDA implementation
// (cuda/gpu_train_step.hpp) is checked against, and what lets the CPU tests drive the trainer's device branch.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/config.hpp"
#include "model/model.hpp"
#include "model/params.hpp"
#include "train/optimizer.hpp"
#include "train/train_step.hpp"

namespace trex::train {

// A contiguous range of the local flat buffers whose tensors share one replica group (dist::ParamRegion without
// MPI): its gradients are summed over `replicas` (nullptr: this rank holds the only replica), after which every
// rank of that group holds the same values — so the gradient norm counts each of them once by adding its squares
// divided by the group's size over all ranks.
struct GradientRegion {
  int64_t begin = 0, end = 0;
  model::ProcessGroup* replicas = nullptr;
  int holders() const { return replicas ? replicas->size() : 1; }
};

// A step's micro-batches through this rank's pipeline stage (dist::Pipeline::run over `stage`, 1F1B), gradients
// ACCUMULATED into the stage's; returns this stage's share of the losses averaged over the micro-batches.
using StageRunner = std::function<model::Losses(model::StageModel& stage, std::span<const model::Batch> micro)>;

struct DeviceStepConfig {
  model::ModelConfig model;
  OptimizerConfig optimizer;
  bool freeze_router = false;  // optimizer_slots' rules
  bool indexer_only = false;   // dense indexer warm-up: only the indexers are updated
  std::string matmul = "fp32"; // "fp32" | "bf16" products (fp32 accumulation, fp32 master weights)
  // Data parallelism (--dp, one replica per rank): the ranks' gradients are averaged in accumulate() and the
  // expert loads summed before the gate-bias update, so every replica takes the same step. nullptr: one process.
  // Under --ep / --pp it is every rank of the job (the norm's sum, the loads).
  model::ProcessGroup* data_group = nullptr;
  // Model sharding (--ep > 1, --pp > 1): which tensors this rank holds (placement, dist::make_placement: its
  // stage's layers, its routed experts); its routed rows travel among the ep ranks of expert_group; the gradient
  // sum of every replica region (gradient_regions, given the local parameter table) is divided by data_ranks
  // (dp * ep). Empty placement and no regions: the whole model, gradients averaged over data_group.
  model::ParamPlacement placement;
  model::ProcessGroup* expert_group = nullptr;
  std::function<std::vector<GradientRegion>(const model::ParamStore&)> gradient_regions;
  int data_ranks = 1;
  // ZeRO-1 (the trainer sets it in every multi-process run, as its CPU branch does): each rank keeps optimizer state
  // for, and updates, only its shard of every replica region (whole tensors, balanced over the region's replicas:
  // dist::plan_zero_shards), then the replicas all-gather the updated weights. false: every replica updates all.
  bool zero = false;
  // Pipeline parallelism (--pp > 1): this rank's stage runs layers [first_layer, end_layer) (end_layer < 0: all of
  // them, one stage) and accumulate() hands its micro-batches to run_stages.
  int64_t first_layer = 0, end_layer = -1;
  StageRunner run_stages;
};

class DeviceStep {
 public:
  virtual ~DeviceStep() = default;

  // One line for the log: the device, its memory, the products.
  virtual std::string describe() const = 0;

  // The weights: written into host() (initialisation, a checkpoint's weights), then upload(); download() brings
  // the device's current weights back into host() (before a checkpoint is written).
  virtual model::ParamStore& host() = 0;
  virtual void upload() = 0;
  virtual void download() = 0;

  // train::accumulate_gradients' contract: gradients zeroed, every micro-batch's forward and backward, gradients
  // and losses averaged over them, then the gradients averaged over data_group's ranks. Returns this rank's
  // averaged losses.
  virtual model::Losses accumulate(std::span<const model::Batch> micro) = 0;
  // Test hook (--inject-nan-step): a NaN into the gradient at this flat offset.
  virtual void poison_gradient(int64_t offset) = 0;
  // The L2 norm of the gradients of the tensors the optimizer updates.
  virtual double grad_norm() = 0;
  // Global-norm clip to `clip` (<= 0: off) given the norm, then one optimizer step at lr. Returns the clip scale.
  virtual double update(double norm, double clip, double lr) = 0;
  // The auxiliary-loss-free gate-bias update on the last forward's expert loads.
  virtual void update_gate_bias() = 0;
  virtual int64_t n_moe_blocks() const = 0;
  virtual std::span<const int64_t> expert_load(int64_t block) const = 0;

  virtual int64_t optimizer_steps() const = 0;
  virtual void set_optimizer_steps(int64_t t) = 0;
  // The optimizer moments in the layout of host()'s parameter table (one flat buffer per moment, zeros where a
  // tensor keeps no such state): the checkpoint layout in one process (what ShardedOptimizer::gather_canonical
  // gives there); sharded (--ep, --pp) this rank's tensors, which the trainer gathers into the checkpoint.
  // Under ZeRO-1 only this rank's shards are filled (and read): the tensors of checkpoint_ranges().
  virtual void get_state(std::vector<float>& m, std::vector<float>& v) = 0;
  virtual void set_state(std::span<const float> m, std::span<const float> v) = 0;
  // The (offset, numel) ranges of host()'s buffer whose weights and moments this rank gives a checkpoint: each
  // tensor of the job from exactly one rank (its ZeRO-1 shard owner; without ZeRO-1 the first replica of each region).
  virtual TensorRanges checkpoint_ranges() const = 0;

  // Bytes held: {"rank": 0, "device", "param_bytes", "grad_bytes", "optimizer_bytes", "activation_bytes",
  // "total_bytes"} (report_memory's fields, with the device's activation arena).
  virtual nlohmann::json memory() const = 0;
};

// Each region's share of `ranges` (whole tensors): the gradient norm's parts, one per replica group.
std::vector<TensorRanges> ranges_by_region(const TensorRanges& ranges, std::span<const GradientRegion> regions);

// The replica regions of a device step (gradient_regions under --ep / --pp; under plain --dp the whole buffer over
// data_group; one process: the whole buffer alone) and, under ZeRO-1, each one's shards: the CPU and CUDA steps'
// common bookkeeping of who updates what.
class StepRegions {
 public:
  struct Region {
    GradientRegion region;
    // ZeRO-1 (zero and other replicas): every replica's shard [begin[k], begin[k] + count[k]) of the local buffer,
    // this rank's at index `mine`; else one shard, the whole region, updated by every replica.
    std::vector<int64_t> begin, count;
    std::vector<int64_t> offset;  // begin[k] - region.begin: the all-gather's offsets within the region
    int mine = 0;
    bool sharded() const { return begin.size() > 1; }
  };
  StepRegions(const DeviceStepConfig& cfg, const model::ParamStore& store);

  const std::vector<Region>& regions() const { return regions_; }
  // The slots of `slots` inside this rank's shards: what its optimizer holds state for and updates.
  std::vector<TensorSlot> owned(const std::vector<TensorSlot>& slots) const;
  // DeviceStep::checkpoint_ranges: this rank's shard of each sharded region, and each unsharded region it holds the
  // first replica of.
  TensorRanges checkpoint_ranges() const;

 private:
  std::vector<Region> regions_;
};

// Makes the step of a device; set by the front end that links the device (the trex executable in CUDA builds).
using DeviceStepFactory = std::function<std::unique_ptr<DeviceStep>(const DeviceStepConfig&)>;

}  // namespace trex::train
