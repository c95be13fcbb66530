// The GPU model against the CPU model (issue #24 point 6; docs/cuda.md's oracle levels 2 and 3): the same
// parameters (the CPU model's initialisation copied into cuda::Model's host copy), the same packed batches
// (seeded tokens, two documents per row), then
//  - one step: the losses and every parameter's gradient of cuda::Model::forward_backward against
//    model::Model::forward_backward's, and the expert loads of every MoE block (equal counts: the same routing);
//  - a short training run: the loss curves of N optimizer steps (AdamW or Muon; the CPU's train::Optimizer, the
//    device's DeviceOptimizer over the same slots, gate-bias updates after each step), and the same run resumed
//    across devices halfway (parameters, optimizer state and step count moved as a checkpoint moves them).
// The gtest (model_test.cpp) and the driver trex_cuda_model_parity (scripts/gpu-check.sh) call these. CUDA builds
// with a device only (cuda::Model throws without one).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/blas.hpp"
#include "model/config.hpp"
#include "train/optimizer.hpp"

namespace trex::cuda::check {

// The bench's ~1B-parameter V4-style MoE preset (issue #24 point 9; docs/cuda.md gives its shape).
model::ModelConfig bench_1b_config();

// How near a parity case's discrete decisions (top-k routing, the indexer's selection, ReLU masks) are to a tie,
// on the CPU alone: the step of seed's initialisation on make_batch(batch_seed, B, T) — the whole batch, or its
// rows one after the other (rows_one_by_one: the expert-parallel oracle) — against the same step with every
// parameter scaled by (1 + eps·u), u uniform in [-1, 1]. A GPU differs from the CPU by rounding of about 1e-6
// relative; a case whose decisions survive a larger perturbation cannot fail its parity test by a flipped tie.
struct TieMargin {
  int64_t load_mismatches = 0;  // MoE blocks (per row where one by one) whose expert counts changed
  double worst_grad_rel = 0;    // max over tensors of ||g' - g|| / ||g|| (NaN: infinite)
  std::string worst_tensor;
  double worst_loss_rel = 0;
};
TieMargin perturbed_step(const model::ModelConfig& cfg, uint64_t seed, uint64_t batch_seed, int64_t B, int64_t T,
                         bool rows_one_by_one, double eps);
// The fp32 parity bounds the gpu tests hold the GPU model to (gradients: per tensor relative L2; losses).
double fp32_grad_bound();
double fp32_loss_bound();

struct StepParity {
  double ce_cpu = 0, ce_gpu = 0, mtp_cpu = 0, mtp_gpu = 0, bal_cpu = 0, bal_gpu = 0, idx_cpu = 0, idx_gpu = 0;
  double worst_loss_rel = 0;          // max over the four losses of |gpu - cpu| / max(|cpu|, 1e-6)
  double worst_grad_rel = 0;          // max over tensors of ||g_gpu - g_cpu|| / max(||g_cpu||, 1e-30)
  std::string worst_grad_tensor;
  std::string worst_five;             // the five largest relative gradient errors with their tensors (diagnosis)
  int64_t tensors = 0, tensors_over = 0;  // tensors compared; over the gradient bound
  int64_t load_mismatches = 0;        // MoE blocks whose expert counts differ
  bool gpu_bitwise_rerun = false;     // a second GPU step gave the same losses and gradients bit for bit
  double loss_bound = 0, grad_bound = 0;
  bool ok() const;
  std::string str() const;
};

// One step of `cfg` (fp32 or bf16 products on both sides: bf16 needs the CPU's AVX512_BF16, else trex::Error).
StepParity compare_step(const model::ModelConfig& cfg, GemmType type, uint64_t seed, int64_t B, int64_t T);

struct CurveParity {
  std::vector<double> cpu, gpu;          // total loss per step
  std::vector<double> cpu_resumed_from_gpu, gpu_resumed_from_cpu;  // steps [resume_at, steps) after the switch
  int64_t resume_at = 0;
  double worst_rel = 0, worst_resume_rel = 0, bound = 0;
  double cpu_seconds = 0, gpu_seconds = 0;
  bool ok() const;
  std::string str() const;
};

// `steps` optimizer steps of micro-batches B x T at a constant learning rate, from seed's initialisation.
CurveParity compare_training(const model::ModelConfig& cfg, GemmType type, train::OptimizerKind opt, int64_t steps,
                             double lr, uint64_t seed, int64_t B, int64_t T);

// The trainer's device step on CUDA (cuda::make_gpu_train_step) against train::CpuDeviceStep, the CPU path's
// arithmetic behind the same interface: `steps` optimizer steps of `accum` micro-batches B x T each, clipped at
// `clip` (below the gradient norms: every step clipped), at a constant learning rate. Per step the losses, the
// gradient norm and the clip scale; the GPU's optimizer state through get_state / set_state and back (bit for bit
// the same); halfway, a fresh CPU step continues from the GPU's weights and moments (what a checkpoint written on
// the GPU and resumed on the CPU carries) and must follow the GPU's curve; a poisoned gradient gives a NaN norm.
// through_stage: the GPU step takes its micro-batches as a one-stage pipeline (DeviceStepConfig::run_stages: the
// first micro-batch's backward right after its forward, then the other forwards, then their backwards, each of
// which recomputes its forward).
struct TrainStepParity {
  std::vector<double> cpu_loss, gpu_loss, cpu_norm, gpu_norm, cpu_clip, gpu_clip;
  std::vector<double> resumed_on_cpu;  // the CPU continuing from the GPU's halfway state: steps [resume_at, steps)
  int64_t resume_at = 0;
  double worst_loss_rel = 0, worst_norm_rel = 0, worst_clip_rel = 0, worst_resume_rel = 0, bound = 0;
  bool state_round_trip_bitwise = false, poisoned_norm_is_nan = false, clipped_every_step = false;
  bool ok() const;
  std::string str() const;
};
TrainStepParity compare_train_steps(const model::ModelConfig& cfg, GemmType type, train::OptimizerKind opt,
                                    int64_t steps, int64_t accum, double clip, double lr, uint64_t seed, int64_t B,
                                    int64_t T, bool through_stage = false);

// Expert parallelism of the GPU model (ModelOptions::placement, expert_group) without MPI: `ranks` GPU models on
// one device, each in a thread of its own and holding only its routed experts, their collectives met in shared
// memory; rank r runs row r of a seeded batch. The one-process GPU model running the same rows one after the
// other (its gradients accumulated) is the oracle: each rank's losses and expert loads are those of its row; the
// sum over the ranks of a replicated tensor's gradient, and the owner's gradient of a routed expert, are the
// one-process gradient (the same sums in another order).
struct ExpertParallelParity {
  int ranks = 0;
  double worst_loss_rel = 0, worst_grad_rel = 0, loss_bound = 0, grad_bound = 0;
  std::string worst_grad_tensor;
  int64_t tensors = 0, load_mismatches = 0;
  bool shards_hold_own_experts = false;  // every rank's store: the replicated tensors and exactly its E/ranks experts
  std::string error;                     // what a rank threw (empty: none)
  bool ok() const;
  std::string str() const;
};
ExpertParallelParity compare_expert_parallel(const model::ModelConfig& cfg, GemmType type, int ranks, uint64_t seed,
                                             int64_t T);

// Data parallelism with ZeRO-1 behind the trainer's device-step interface (DeviceStepConfig::zero), without MPI:
// `ranks` replicas of the tiny model, each in a thread of its own with two steps of the trainer's interface — the
// tested one (zero set) and the oracle — whose collectives meet in shared memory (one rendezvous each); rank r's
// micro-batches are its own seeded rows. `steps` clipped optimizer steps at a constant learning rate, each rank's
// loss and gradient norm against the oracle's. gpu: the tested step is the CUDA one (cuda::make_gpu_train_step,
// every rank on the one device), the oracle train::CpuDeviceStep with ZeRO-1, within the curve bound; else both
// are CpuDeviceSteps and the oracle updates every tensor on every rank (no ZeRO-1): the same arithmetic, so
// bitwise the same. Either way, after the steps every replica holds the same weights bit for bit (the all-gather),
// the ranks' checkpoint ranges partition the buffer, and each rank holds a part of the optimizer state, the parts
// adding up to one replica's. two_regions: the replicas' buffer handed to the steps as two replica regions (split at
// the tensor nearest its middle; DeviceStepConfig::gradient_regions, as --ep / --pp do), so the second region's
// shards and all-gather start past 0 and each region has a group of its own.
struct ZeroParity {
  int ranks = 0;
  int64_t steps = 0;
  bool gpu = false, two_regions = false;
  std::vector<std::vector<double>> ref_loss, got_loss;  // [rank][step]
  double worst_loss_rel = 0, worst_norm_rel = 0, bound = 0;
  bool replicas_bitwise = false, ranges_partition = false, state_split = false;
  std::vector<int64_t> optimizer_bytes;  // per rank (the tested step's), and one replica's
  int64_t replica_optimizer_bytes = 0;
  std::string error;  // what a rank threw (empty: none)
  bool ok() const;
  std::string str() const;
};
ZeroParity compare_zero_data_parallel(const model::ModelConfig& cfg, bool gpu, train::OptimizerKind opt, int ranks,
                                      int64_t steps, double clip, double lr, uint64_t seed, int64_t B, int64_t T,
                                      bool two_regions = false);

// Pipeline stages: the GPU model cut into two stages (ModelOptions::first_layer / end_layer, each holding only its
// layers; the embedding on both ends under MTP) running one batch — stage 0's streams into stage 1, stage 1's
// input gradient back into stage 0 — against one process's forward_backward: the losses (each stage's share
// added), every tensor's gradient (the embedding's two parts added), the expert loads of each stage's blocks; and a
// second backward without its forward is refused (the model keeps one batch: a backward follows its forward).
struct PipelineParity {
  int64_t split = 0;  // stage 0 holds layers [0, split)
  double worst_loss_rel = 0, worst_grad_rel = 0, loss_bound = 0, grad_bound = 0;
  std::string worst_grad_tensor;
  int64_t tensors = 0, load_mismatches = 0;
  bool stages_hold_their_layers = false;
  std::string error;
  bool ok() const;
  std::string str() const;
};
PipelineParity compare_pipeline_stages(const model::ModelConfig& cfg, GemmType type, uint64_t seed, int64_t T);

// The GPU decoder (cuda::Decoder) against the CPU's model::Decoder on the same parameters (sinks, mHC bases and gate
// biases perturbed so that every path is live): a prompt longer than the window, the compressor rings and a
// step's rows (so chunked), ragged steps of several sequences, batched single tokens, a sequence closed and its
// slot reused; every position's logits of every step, relative to the position's logit scale.
struct DecodeParity {
  int64_t positions = 0, steps = 0;
  double worst_rel = 0, bound = 0;
  std::string worst_at;
  bool slot_reused = false;
  double cpu_seconds = 0, gpu_seconds = 0;
  bool ok() const;
  std::string str() const;
};
DecodeParity compare_decode(const model::ModelConfig& cfg, GemmType type, uint64_t seed);

}  // namespace trex::cuda::check
