// `trex run`: the whole T-Rex pipeline on an embedded default (ARCHITECTURE.md data flow):
// synth -> tokenizer -> pack -> CPT -> SFT (from CPT, and from base for comparison) -> generate -> eval
// -> report. Each stage is its own trex subcommand (see stages.hpp); finished stages are skipped on rerun.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace trex::pipeline {

struct RunOptions {
  std::string preset = "tiny";
  std::filesystem::path out = "runs/default";
  double budget_minutes = 25.0;  // training steps are sized to fit this on 2 cores
  uint64_t seed = 1234;
  // Sizes (0 = derived from the budget).
  int synth_count = 0, test_count = 0;
  int cpt_steps = 0, sft_steps = 0;
  int seq_len = 0, sft_seq_len = 0, micro_batch = 0;
  int max_new_tokens = 0;
  int sliding_window = 0;  // the base model's attention window (0 = the plan's)
  // What the tiny model learns to answer and the evaluator scores: "code" (a gurobipy program reading the
  // item's data.json, run through the layer: B4O-Feasible's protocol, the style the tiny model learns to pass in
  // minutes; the default) or "lp" (an LP-file block, solved by trex's reader and CBC; issue #8's style, which no
  // route passes at this budget, docs/run.md).
  std::string answer_style = "code";
  // The B4O-Feasible slice every route is also scored on: the benchmark file's first N items in file order
  // (-1 = the plan's: 40, 2 with --quick; 0 = none), read from benchmarks_dir (empty: $TREX_BENCHMARKS, else
  // ../shared/benchmarks beside the source tree, as trex eval finds it).
  int b4o_items = -1;
  std::filesystem::path benchmarks_dir;
  // The trainers' matrix products: fp32, bf16 (fp32 accumulation and master weights), or auto = bf16 where the
  // CPU has AVX512_BF16, else fp32.
  std::string matmul = "auto";
  // Where the three training stages run: "cpu", or "cuda" (trex train --device cuda, the GPU model; auto products
  // are then bf16). Generation and evaluation stay on the CPU: the GPU model has no incremental decoding yet.
  std::string device = "cpu";
  // Extra synth bucket weights (trex synth --mix / --test-mix specs, applied after the run's own): e.g.
  // synth_mix {"structure=all:1,knapsack:0"} and test_mix {"structure=knapsack:1"} measure transfer to a family
  // the training data never saw (the report adds a held-out column).
  std::vector<std::string> synth_mix, test_mix;
  std::filesystem::path trex_bin;  // default: this executable
  bool quick = false;              // a shortened run (tests): tiny data, a few steps
};

// Runs (or resumes) the pipeline and writes run.json, report.md and report.html into options.out.
// Returns the path of report.md. Throws trex::Error naming the failed stage and its log.
std::filesystem::path run_pipeline(const RunOptions& options);

}  // namespace trex::pipeline
