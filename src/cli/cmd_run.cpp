// `trex run`: the whole pipeline on the embedded default (argument parsing only; see pipeline/run). `--device
// cuda` runs the training and generation stages on the GPU model (trex train / generate --device cuda) in builds
// that carry it, and is refused with the reason (cuda/device_select.hpp) before the run folder is made where there
// is no device; evaluation stays on the CPU, which the run says as it starts.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "cli/command.hpp"
#include "cli/cuda_support.hpp"
#include "cuda/device_select.hpp"
#include "ordata/synth.hpp"
#include "pipeline/run.hpp"
#include "util/error.hpp"

namespace cmd_run {  // this file's own names (the unity build joins cli files)

trex::cli::CommandRegistrar reg("run", "The whole T-Rex pipeline end to end (synth → CPT → SFT → eval → report)", [](CLI::App& sub) {
  auto o = std::make_shared<trex::pipeline::RunOptions>();
  auto out = std::make_shared<std::string>("runs/default");
  sub.add_option("--preset", o->preset, "Model preset (tiny, bench, small)")->capture_default_str();
  sub.add_option("--out", *out, "Run folder (finished stages in it are reused)")->capture_default_str();
  sub.add_option("--budget-minutes", o->budget_minutes, "Wall-clock budget the training steps are sized for")->capture_default_str();
  sub.add_option("--seed", o->seed, "Seed of every stage")->capture_default_str();
  sub.add_option("--synth-count", o->synth_count, "SFT samples to synthesise (default: from the budget)");
  sub.add_option("--test-count", o->test_count, "Held-out test items");
  sub.add_option("--cpt-steps", o->cpt_steps, "CPT optimizer steps");
  sub.add_option("--sft-steps", o->sft_steps, "SFT optimizer steps (both routes)");
  sub.add_option("--seq-len", o->seq_len, "CPT sequence length");
  sub.add_option("--sft-seq-len", o->sft_seq_len, "SFT packed sequence length");
  sub.add_option("--micro-batch", o->micro_batch, "Sequences per step");
  sub.add_option("--max-new-tokens", o->max_new_tokens, "Generation length per test item (default 512 for code answers, 1024 for lp)");
  sub.add_option("--sliding-window", o->sliding_window, "Attention window of the base model (default 256 for code answers, 1024 for lp)")
      ->check(CLI::PositiveNumber);
  sub.add_option("--answer-style", o->answer_style,
                 "What the model learns to answer: code (a gurobipy program reading data.json; the default) or lp (an "
                 "LP-file block: no route passes at this budget, docs/run.md)")
      ->check(CLI::IsMember({"lp", "code"}))
      ->capture_default_str();
  sub.add_option("--matmul", o->matmul,
                 "The trainers' matrix products: fp32, bf16 (fp32 accumulation) or auto (bf16 where the CPU has "
                 "AVX512_BF16)")
      ->check(CLI::IsMember({"auto", "fp32", "bf16"}))
      ->capture_default_str();
  sub.add_option("--b4o-items", o->b4o_items,
                 "Score every route also on B4O-Feasible's first N items in file order (default 40, 2 with --quick; 0 = "
                 "none)")
      ->check(CLI::NonNegativeNumber);
  auto data = std::make_shared<std::string>();
  sub.add_option("--data", *data, "Benchmark folder of the B4O-Feasible slice (default: $TREX_BENCHMARKS, else "
                                 "../shared/benchmarks; without either the slice is skipped)");
  sub.add_flag("--quick", o->quick, "A shortened run (minutes): tiny data, a few steps");
  sub.add_option("--synth-mix", o->synth_mix,
                 "Extra trex synth --mix spec, repeatable (after the run's own): e.g. structure=all:1,knapsack:0");
  sub.add_option("--test-mix", o->test_mix,
                 "trex synth --test-mix spec of the test items, repeatable: e.g. structure=knapsack:1 (a held-out family; "
                 "the report adds a transfer table)");
  auto device = std::make_shared<std::string>("cpu");
  sub.add_option("--device", *device,
                 trex::cli::kTrainsOnCuda
                     ? "cpu (default) or cuda: the training and generation stages on the GPU model (evaluation stays "
                       "on the CPU); refused with the reason when there is no device"
                     : "cpu (default) or cuda (this trex was built without CUDA: refused, with the reason)")
      ->check(CLI::IsMember(trex::cuda::device_names()))
      ->capture_default_str();
  return [o, out, data, device] {
    // before the run folder is made
    trex::cuda::require_device(trex::cuda::parse_device(*device), "trex run", trex::cli::kTrainsOnCuda);
    if (*device == "cuda")
      std::fprintf(stderr, "trex run --device cuda: the training and generation stages run on the GPU model; "
                           "evaluation runs on the CPU\n");
    o->device = *device;
    {  // bad mix specs fail here, before the run folder is made, not in the synth stage
      auto mix = trex::ordata::default_mix();
      for (const auto& m : o->synth_mix) trex::ordata::apply_mix(m, mix);
      for (const auto& m : o->test_mix) trex::ordata::apply_test_mix(m, mix);  // the test task is the answer style's
    }
    o->out = *out;
    o->benchmarks_dir = *data;
    const auto t0 = std::chrono::steady_clock::now();
    auto report = trex::pipeline::run_pipeline(*o);
    const long secs = std::lround(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    // The report's answer to the question, as the run ends: everything above its first subsection (the
    // route x bucket table and the CPT -> SFT minus SFT-only line).
    std::ifstream md(report);
    std::string line;
    std::cout << "\n";
    while (std::getline(md, line) && line.rfind("### ", 0) != 0) std::cout << line << "\n";
    std::cout << "trex run: " << secs / 60 << " min " << secs % 60 << " s; report: " << report.string() << "\n";
    return 0;
  };
});

}  // namespace cmd_run
