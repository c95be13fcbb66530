// The kernel tiling tuner for trex's bf16 GEMM (PLANNER_AND_TUNER.md §B6): choose the cache blocking (kc, mc,
// nc) of nn::gemm_bf16 — whose 8 × 32 register tile is fixed — for a weighted set of GEMM shapes (by default the
// products of one training step of a model), as an integer program solved on CBC, then check the choice by
// timing it on this machine against the kernel's default, the BLIS analytical blocking and (optionally) every
// blocking of the space.
//
// Model (separable, so the program stays linear; every constant in TuneCostParams, docs/tune.md):
//   time = compute (2·M'·N'·K at peak × kernel efficiency; M', N' rounded up to the tile)
//        + micro-kernel calls ⌈M/8⌉·⌈N/32⌉·⌈K/kc⌉ × a fixed cost each (loading and storing the C tile)
//        + packing: A converted ⌈N/nc⌉ times, B once (bytes at a packing rate)
//        + the exposed share of re-reading B's block once per mc block of A: ⌈M/mc⌉·K·N'·2 bytes from L3.
// Rules: the A block mc·kc·2 bytes within (W2 − 2)/W2 of L2; the B block kc·nc·2 within half of (W3 − 1)/W3
// of this CPU's L3 share; and at L1 either
//   - (default, "stream") the bytes a micro-kernel call reads from L2 — the A micro-panel, plus the B
//     micro-panel when the two do not fit in (W1 − 1)/W1 of L1 — must arrive no slower than the call's FMAs
//     consume them, or
//   - ("blis") BLIS's capacity rule: both micro-panels kc·(8 + 32)·2 bytes within (W1 − 1)/W1 of L1.
// The BLIS rule was the first model; on this machine it excluded every kc ≥ 384 and its choice measured 6.8 %
// slower than the fastest blocking (docs/tune.md), so "stream" is the default and "blis" stays selectable.
// The program: one-hot binaries per kc, mc and nc value; the L1 rule is a per-kc condition; the L2 and L3 rules
// are products, handled by pair binaries created only for feasible (kc, mc) and (kc, nc) pairs and linked to
// the one-hot rows.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/config.hpp"
#include "nn/gemm_bf16.hpp"
#include "tune/cpu_model.hpp"

namespace trex::tune {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  double weight = 1.0;  // how many times a step runs it
  std::string name;
};
// "MxNxK" or "MxNxK*W", comma-separated. Throws trex::Error naming the bad item.
std::vector<GemmShape> parse_shapes(const std::string& text);
// The forward, input-gradient and weight-gradient products of one training step of `cfg` on `tokens` tokens
// (one layer's attention projections, shared expert, routed experts at their mean rows, and the head), weighted
// by how often a step runs each.
std::vector<GemmShape> model_gemm_shapes(const model::ModelConfig& cfg, int64_t tokens);

struct TuneSpace {
  std::vector<int64_t> kc = {64, 128, 192, 256, 320, 384, 512, 768, 1024};
  std::vector<int64_t> mc = {16, 32, 64, 96, 128, 192, 256, 384, 512};
  std::vector<int64_t> nc = {64, 128, 256, 512, 1024, 2048, 4096};
};

struct TuneCostParams {
  double kernel_efficiency = 0.9;   // micro-kernel share of the bf16 dot peak (measured 91 %, docs/train.md)
  double call_cycles = 60;          // per micro-kernel call: C tile load/scale/store, loop set-up
  double pack_bytes_per_cycle = 16; // fp32 read + bf16 write while packing
  double l3_bytes_per_cycle = 16;   // B block re-reads
  double b_reload_exposed = 0.25;   // share of the re-reads not hidden behind the FMAs
  double l2_bytes_per_cycle = 32;   // L2 -> L1 fill rate (the "stream" L1 rule)
  bool blis_l1_rule = false;        // the BLIS L1 capacity rule instead of the stream rule
};

// "" when the blocking satisfies the rules, else which rule it breaks.
std::string capacity_violation(const CpuModel& cpu, const nn::Bf16Blocking& b, const TuneCostParams& p);
double predict_seconds(const CpuModel& cpu, const GemmShape& s, const nn::Bf16Blocking& b, const TuneCostParams& p);
double predict_seconds(const CpuModel& cpu, const std::vector<GemmShape>& shapes, const nn::Bf16Blocking& b,
                       const TuneCostParams& p);  // weighted sum

struct ScoredBlocking {
  nn::Bf16Blocking blocking;
  double predicted_s = 0;
  double measured_s = -1;  // < 0: not measured
  bool fits = true;        // the capacity rules hold
};

// The readable reference: every blocking of the space that fits, by predicted time (ties: smaller kc, mc, nc).
std::vector<ScoredBlocking> rank_by_model(const CpuModel& cpu, const std::vector<GemmShape>& shapes,
                                          const TuneSpace& space, const TuneCostParams& p);
struct MilpChoice {
  bool solved = false;
  std::string status;
  ScoredBlocking best;
  double objective_s = 0;   // the program's objective (equals best.predicted_s)
  double solve_seconds = 0;
  int variables = 0, rows = 0;
};
MilpChoice choose_blocking_milp(const CpuModel& cpu, const std::vector<GemmShape>& shapes, const TuneSpace& space,
                                const TuneCostParams& p, double time_limit_s = 30.0);

// Weighted time of the shapes with this blocking on the calling thread: random operands, one warm-up, then the
// best of `reps` runs per shape. Requires nn::bf16_matmul_supported().
double measure_seconds(const std::vector<GemmShape>& shapes, const nn::Bf16Blocking& b, int reps);

}  // namespace trex::tune
