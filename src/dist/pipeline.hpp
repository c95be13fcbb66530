// Pipeline parallelism: one stage of a pipeline of model layers (StagePlan) running a 1F1B schedule over the
// micro-batches of a step. Stage s runs min(S-s-1, M) warm-up forwards, then alternates one forward and one
// backward, then drains the remaining backwards; each micro-batch keeps its activations in its own activation
// slot of the stage (model::StageModel: the CPU model, or train::RecomputingStage over the GPU model, which
// recomputes a slot's forward at its backward) until its backward. Between stages the multi-stream residual state
// [rows, hc_mult, hidden] travels forward and its gradient backward with MPI point-to-point on the pipeline's
// own communicator: sends are nonblocking (MPI_Isend straight from the slot's activation memory, completed
// before the slot is reused), receives block — the time blocked in them (and in completing sends) is the
// pipeline bubble. The first stage embeds the tokens; the last runs the head, the cross-entropy and the MTP
// modules. Every stage of a pipeline works on the same rows (each rank has the tokens: the loaders are
// deterministic), so only activations and gradients travel.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "dist/stage_plan.hpp"
#include "model/model.hpp"

namespace trex::dist {

struct PipelineStats {
  double compute_seconds = 0;  // inside stage_forward / stage_backward (includes the model's own exchanges)
  double bubble_seconds = 0;   // blocked receiving activations / gradients or completing sends
  int64_t messages = 0;
};

class Pipeline {
 public:
  // comm: the ranks of one pipeline ordered by stage (duplicated). plan.stages() must equal its size.
  Pipeline(MPI_Comm comm, model::StageModel& model, StagePlan plan);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  int stage() const { return stage_; }
  int stages() const { return plan_.stages(); }
  const StagePlan& plan() const { return plan_; }
  int64_t first_layer() const { return plan_.first[size_t(stage_)]; }
  int64_t end_layer() const { return plan_.first[size_t(stage_) + 1]; }

  // The order of operations of stage `stage` of `stages` over `micro` micro-batches: +i = forward of
  // micro-batch i, -(i+1) = its backward. (The schedule itself, tested on its own.)
  static std::vector<int64_t> schedule(int stage, int stages, int64_t micro);

  // Runs one step's micro-batches through this stage, ACCUMULATING gradients (the caller zeroes and averages).
  // before_last_backward runs just before the last backward (arming the bucketed all-reduce); beat reports
  // progress to the watchdog. Returns this stage's share of the losses, averaged over the micro-batches.
  model::Losses run(std::span<const model::Batch> micro, const std::function<void()>& before_last_backward,
                    const std::function<void(const char*)>& beat);
  // Timing of the last run().
  const PipelineStats& stats() const { return stats_; }

 private:
  void recv(float* buf, int64_t n, int peer, int tag);
  void wait_send(size_t slot);

  MPI_Comm comm_ = MPI_COMM_NULL;
  model::StageModel& model_;
  StagePlan plan_;
  int stage_ = 0;
  std::vector<float> in_, grad_in_;         // received activations / gradients (copied into the slot)
  std::vector<MPI_Request> fwd_send_, bwd_send_;  // per slot
  PipelineStats stats_;
};

}  // namespace trex::dist
