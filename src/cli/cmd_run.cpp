// `trex run`: the whole pipeline on the embedded default (argument parsing only; see pipeline/run).
#include <iostream>

#include "cli/command.hpp"
#include "pipeline/run.hpp"

namespace {

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
                 "What the model learns to answer: lp (an LP-file block) or code (a gurobipy program reading data.json)")
      ->check(CLI::IsMember({"lp", "code"}))
      ->capture_default_str();
  sub.add_option("--matmul", o->matmul,
                 "The trainers' matrix products: fp32, bf16 (fp32 accumulation) or auto (bf16 where the CPU has "
                 "AVX512_BF16)")
      ->check(CLI::IsMember({"auto", "fp32", "bf16"}))
      ->capture_default_str();
  sub.add_flag("--quick", o->quick, "A shortened run (minutes): tiny data, a few steps");
  return [o, out] {
    o->out = *out;
    auto report = trex::pipeline::run_pipeline(*o);
    std::cout << "report: " << report.string() << "\n";
    return 0;
  };
});

}  // namespace
