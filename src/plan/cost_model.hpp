// The planner's cost model (PLANNER_AND_TUNER.md §A3): for one parallel configuration (a Candidate) of a
// DeepSeek-V4 model (or a dense GPT, to check against published runs) on a Cluster, the memory each pipeline stage needs and the time of one training step —
// compute per op class, tensor/expert/pipeline/data-parallel communication by network tier, the pipeline
// bubble and the optimizer step (with host swap) — from which tokens/s and MFU follow.
//
// Inputs are per-layer constants computed once per model and sequence length (ModelProfile: parameters from
// the checkpoint inventory, FLOPs from DEEPSEEK_V4.md §10), so a stage's cost is a sum over its layers; that is
// what keeps the stage-assignment MILP (stage_assign.hpp) linear. Every approximation is named in docs/plan.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "plan/cluster.hpp"

namespace trex::plan {

// Per-layer constants of a model at one sequence length.
struct LayerProfile {
  double dense_params = 0;       // every non-routed-expert parameter of the block
  double expert_params = 0;      // all routed experts of the block
  double dense_flops = 0;        // forward FLOPs per token: matmuls other than routed experts
  double expert_flops = 0;       // forward FLOPs per token of the k routed experts
  double attention_flops = 0;    // forward FLOPs per token of attention scores/values and the indexer
  bool moe = true;
};

struct ModelProfile {
  std::string name;
  bool dense_gpt = false;  // a dense GPT (Megatron's layout) instead of DeepSeek-V4
  int64_t seq_len = 0, hidden = 0, heads = 0, experts = 0, top_k = 0, expert_ffn = 0, vocab = 0, hc_mult = 0;
  int64_t head_dim = 0, q_lora = 0, o_groups = 0, o_lora = 0;
  std::vector<LayerProfile> layers;
  double embedding_params = 0;   // first stage
  double head_params = 0;        // last stage: head + final norm + every MTP module's dense part
  double head_expert_params = 0; // last stage: the MTP blocks' routed experts
  double head_flops = 0;         // forward FLOPs per token on the last stage (head + MTP)
  double forward_flops = 0;      // per token, whole model (§10 F_fwd, MTP included)
};
ModelProfile profile_model(const model::ModelConfig& cfg, int64_t seq_len, const std::string& name = "");

// Dense GPT models as Megatron counts them, for checking the planner against published runs (PTD-P):
// per layer 12·d² + 13·d parameters and 24·d² + 4·s·d forward FLOPs per token (Narayanan et al.'s
// 96·B·s·L·d²·(1 + s/(6d) + V/(16·L·d)) per iteration with recompute, divided by its four passes), untied
// V·d embedding (+ s·d positions) and output layer; activations by Korthikanti et al.'s table (34·d + 5·a·s
// bytes per token without recompute, 34·d selective, 2·d full).
struct DenseGpt {
  std::string name;
  int64_t layers = 0, hidden = 0, heads = 0, vocab = 51200;
};
std::vector<DenseGpt> dense_gpt_presets();  // gpt-175b, gpt-530b, gpt-1t (PTD-P's Table 1 shapes)
ModelProfile profile_dense_gpt(const DenseGpt& g, int64_t seq_len);

// Host swap keeps two optimizer buckets of 0.5 GB on the device (double buffering).
constexpr double kHostSwapBufferGB = 1.0;

enum class Recompute { None, Selective, Full };
enum class OptimizerPlacement { Replicated, Sharded, HostSwap };
const char* to_string(Recompute r);
const char* to_string(OptimizerPlacement o);

// One parallel configuration. N = tp·cp·pp·dp = etp·ep·edp·pp; micro_batches = gbs / (dp·mbs).
struct Candidate {
  int tp = 1, cp = 1, pp = 1, vpp = 1, ep = 1, etp = 1, dp = 1, edp = 1, mbs = 1;
  int64_t micro_batches = 1;
  Recompute recompute = Recompute::Full;
  OptimizerPlacement optimizer = OptimizerPlacement::Sharded;
  std::string str() const;  // "TP2 PP8 VPP2 EP64 ETP1 DP32 EDP1 MBS1 m32 full host_swap"
};

struct Workload {
  long ranks = 0;
  int64_t gbs = 0;             // sequences per step
  double dispatch_bytes = 2;   // bytes per element of the EP dispatch (1 = FP8/INT8) and combine
  double combine_bytes = 2;
  double expert_imbalance = 1.0;  // γ = max-rank / mean expert load (router statistics)
};

// --- The formulas, each on its own so tests can check them against the sources ---
// α–β collective times (seconds) of a buffer of `bytes` over n ranks at `gbps` with per-step latency α.
double allreduce_seconds(double bytes, long n, double gbps, double latency_us);
double reduce_scatter_seconds(double bytes, long n, double gbps, double latency_us);  // = all-gather
double alltoall_seconds(double bytes_per_rank, long n, double gbps, double latency_us);
// Pipeline time of m micro-batches over stages with per-micro-batch times t (fwd + bwd on that stage): Alpa's
// Σ_s t_s + (m − 1)·max_s t_s, with the fill/drain part divided by the virtual chunks v (interleaved 1F1B).
double pipeline_seconds(const std::vector<double>& stage_seconds, int64_t m, int v);
// Bytes per parameter of weights + gradients + optimizer (bf16 weights, fp32 gradients, fp32 master/m/v), with
// the optimizer state split over `shards` ranks (1 = replicated): 18 replicated, 6 + 12/shards sharded.
double bytes_per_param(long shards, bool optimizer_on_device);
// Micro-batches whose activations stage s holds at the peak of 1F1B: min(m, p − s), times 1 + (p−1)/(p·v) when
// interleaved (Megatron's estimator).
double inflight_micro_batches(int stage, int pp, int vpp, int64_t m);

// What one stage holds and costs, per rank.
struct StageCost {
  int64_t first_layer = 0, end_layer = 0;  // layers [first, end)
  double weights_gb = 0, grads_gb = 0, optimizer_gb = 0, activations_gb = 0, memory_gb = 0;
  double compute_s = 0;    // one micro-batch: forward + backward + recompute, with TP and exposed EP traffic
  double comm_s = 0;       // one micro-batch: the pipeline sends of the stage
};

struct Estimate {
  Candidate cand;
  bool memory_ok = false;
  std::string binding;     // "memory (stage 0: 71.2 of 60 GB)", "compute", "bubble", "dp_comm", ...
  std::vector<StageCost> stages;
  double step_s = 0, pipeline_s = 0, bubble_s = 0, dp_exposed_s = 0, optimizer_s = 0;
  double tp_s = 0, ep_s = 0, pp_s = 0;  // per step, summed over the critical stage's micro-batches
  double tokens_per_s = 0, mfu_3f = 0, mfu_4f = 0, peak_memory_gb = 0, memory_cap_gb = 0;
};

// Per-layer constants of one candidate (what the stage assignment sums): time of one micro-batch through the
// layer and the memory it adds on a stage holding `inflight` micro-batches.
struct LayerCosts {
  std::vector<double> seconds;        // per layer, one micro-batch: compute + tp + ep
  std::vector<double> tp_s, ep_s;     // its communication parts (ep: the exposed share of the all-to-alls)
  std::vector<double> static_gb;      // per layer: weights + grads + optimizer
  std::vector<double> activation_gb;  // per layer per in-flight micro-batch
  double working_gb = 0;              // one layer's full working set (held once with full recompute)
  double first_static_gb = 0, last_static_gb = 0, last_activation_gb = 0, last_seconds = 0;
};
LayerCosts layer_costs(const ModelProfile& m, const Cluster& c, const Workload& w, const Candidate& cand);

// What the stage assignment (stage_assign.hpp) optimises and the estimate reports: per-layer time and memory of
// one candidate, and what only the first / last / every stage adds.
struct StageProblem {
  std::vector<double> seconds, static_gb, activation_gb;  // per layer
  std::vector<double> inflight;                           // per stage: micro-batches whose activations it holds
  double first_gb = 0;        // stage 0 only (embedding)
  double last_gb = 0;         // last stage only (head, MTP, logits)
  double last_seconds = 0;    // last stage only (head, MTP)
  double fixed_gb = 0;        // every stage (one recomputed layer's working set, swap buffers)
  double cap_gb = 0;
  int stages() const { return int(inflight.size()); }
};
StageProblem stage_problem(const LayerCosts& lc, const Cluster& c, const Candidate& k);

// A stage's time (one micro-batch, without the pipeline sends) and memory under a cut: the one formula the DP,
// the MILP and the estimate share.
double stage_seconds(const StageProblem& p, int stage, int64_t begin, int64_t end);
double stage_memory_gb(const StageProblem& p, int stage, int64_t begin, int64_t end);

// The full estimate for a given cut of the layers into stages (first[s] .. first[s+1]), from the candidate's
// layer_costs.
Estimate estimate(const ModelProfile& m, const Cluster& c, const Workload& w, const Candidate& cand,
                  const LayerCosts& lc, const std::vector<int64_t>& first);

}  // namespace trex::plan
