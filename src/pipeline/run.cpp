// The embedded default pipeline: stage list, the small glue steps between stages (SFT selection, base
// weights, prompts), run.json and the report.
#include "pipeline/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "model/checkpoint.hpp"
#include "model/config.hpp"
#include "model/model.hpp"
#include "nn/gemm_bf16.hpp"
#include "oreval/benchmarks.hpp"
#include "pipeline/report.hpp"
#include "pipeline/stages.hpp"
#include "text/tokenizer.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"
#include "util/log.hpp"

namespace trex::pipeline {
namespace fs = std::filesystem;

namespace {

struct Plan {
  int synth_count, test_count, vocab, cpt_steps, sft_steps, seq_len, micro_batch, max_new_tokens;
  // The base model's sliding window. The tiny preset's 32 tokens cannot see a prompt's data-key list from the
  // answer's first lines, and the tiny model does not learn to find it through the compressed entries in a
  // few hundred steps: with 32 every trained route wrote one family's program for every problem (23/24 answers
  // read keys the item lacks); with 256 the key list is in view and the answers follow the problem's family.
  int sliding_window = 256;
  // SFT packs conversations into sequences of this length. A code_only conversation is ~800 tokens, some over
  // 1,024: at 1,024 one fits per sequence, a quarter of the tokens are padding and 12% of the answers are cut; at
  // 2,048 two or three share a sequence (11% padding, none cut), so a step sees several times more answers.
  int sft_seq_len = 2048;
  double cpt_lr = 1e-3, sft_lr = 5e-4;  // short runs of a tiny model: higher than the trainer's 3e-4 default
  // The answer style: the synth task of the held-out items and of the SFT set, synth's task mix (the test
  // task four times as often as each other one), and trex eval's --style.
  std::string task, task_mix, eval_style;
  // The trainers' matrix products, resolved: bf16 where the CPU has AVX512_BF16 (1.37x faster steps on the tiny
  // preset here), else fp32 (the same steps take that much longer).
  std::string matmul = "fp32";
};

Plan make_plan(const RunOptions& o) {
  Plan p{};
  auto size = [&p](int synth, int test, int vocab, int cpt, int sft, int seq, int micro_batch, int new_tokens) {
    p.synth_count = synth, p.test_count = test, p.vocab = vocab, p.cpt_steps = cpt, p.sft_steps = sft;
    p.seq_len = seq, p.micro_batch = micro_batch, p.max_new_tokens = new_tokens;
  };
  if (o.quick) {
    size(60, 4, 1024, 2, 2, 512, 1, 6);
    p.sft_seq_len = 1024;
  } else {
    // Sized for ~budget minutes on 2 cores with bf16 products: data and tokenizer take seconds; LP answers train
    // for ≈ 12.5 minutes (the 1,024-token window) and generate for ≈ 9 (up to 1,024 new tokens, batched
    // incremental decoding); code answers ≈ 10 and ≈ 3 (256, 512). fp32 products train ≈ 1.3x longer. 96
    // held-out items: with 24, one item moved Pass@1 by 4 points, and the routes' difference was within a few.
    double scale = std::max(0.2, o.budget_minutes / 25.0);
    size(int(2000 * scale), 96, 4096, int(410 * scale), int(270 * scale), 1024, 1, 512);
  }
  if (o.answer_style == "code") {
    p.task = "code_only";
    p.eval_style = "report";
  } else if (o.answer_style == "lp") {
    p.task = "lp_structure";
    p.eval_style = "lp";
    // An LP answer copies (or computes) every number from the statement, so the whole prompt stays in view
    // while it is written; its answers run to ~670 tokens at the 90th percentile (up to ~1,100).
    p.sliding_window = 1024;
    if (!o.quick) p.max_new_tokens = 1024;
  } else {
    throw Error("trex run: unknown --answer-style '" + o.answer_style + "' (expected lp or code)");
  }
  p.task_mix = "task=" + p.task + ":4";
  for (const char* t : {"full_model", "code_only", "lp_structure", "repair"})
    if (p.task != t) p.task_mix += std::string(",") + t + ":1";
  if (o.device != "cpu" && o.device != "cuda")
    throw Error("trex run: unknown --device '" + o.device + "' (expected cpu or cuda)");
  if (o.matmul == "auto")
    p.matmul = o.device == "cuda" || nn::bf16_matmul_supported() ? "bf16" : "fp32";
  else if (o.matmul == "fp32" || o.matmul == "bf16")
    p.matmul = o.matmul;
  else
    throw Error("trex run: unknown --matmul '" + o.matmul + "' (expected auto, fp32 or bf16)");
  if (o.synth_count > 0) p.synth_count = o.synth_count;
  if (o.test_count > 0) p.test_count = o.test_count;
  if (o.cpt_steps > 0) p.cpt_steps = o.cpt_steps;
  if (o.sft_steps > 0) p.sft_steps = o.sft_steps;
  if (o.seq_len > 0) p.seq_len = o.seq_len;
  if (o.sft_seq_len > 0) p.sft_seq_len = o.sft_seq_len;
  if (o.micro_batch > 0) p.micro_batch = o.micro_batch;
  if (o.max_new_tokens > 0) p.max_new_tokens = o.max_new_tokens;
  if (o.sliding_window > 0) p.sliding_window = o.sliding_window;
  return p;
}

// The SFT set the tiny model learns: the conversations of the held-out items' task (lp_structure: an LP-file
// block; code_only: a gurobipy program reading data.json, B4O-Feasible's protocol).
void select_sft(const fs::path& in, const fs::path& out, const std::string& task) {
  JsonlReader r(in);
  JsonlWriter w(out);
  while (auto j = r.next()) {
    const Json& md = (*j)["metadata"];
    if (md.is_object() && md.value("task", "") == task) w.write(Json{{"messages", (*j)["messages"]}});
  }
  if (w.count() == 0) throw Error(SourceLocation{in.string()}, "no " + task + " samples to train SFT on");
  w.commit();
}

// Prompts for generation: the test item's problem as the single user message (as in training).
void write_prompts(const fs::path& test, const fs::path& out) {
  JsonlReader r(test);
  JsonlWriter w(out);
  while (auto j = r.next())
    w.write(Json{{"id", (*j)["id"]}, {"messages", Json::array({Json{{"role", "user"}, {"content", (*j)["problem"]}}})}});
  w.commit();
}

// Prompts for the B4O-Feasible slice: the benchmark file's first `n` items in file order (the slice
// `trex eval --start 0 --end n` scores), each as its statement alone, the held-out items' prompt.
void write_b4o_prompts(const fs::path& bench_jsonl, int n, const fs::path& out) {
  JsonlReader r(bench_jsonl);
  JsonlWriter w(out);
  for (int i = 0; i < n; ++i) {
    auto j = r.next();
    if (!j) break;
    w.write(Json{{"id", (*j)["id"]}, {"messages", Json::array({Json{{"role", "user"}, {"content", (*j)["problem"]}}})}});
  }
  w.commit();
}

// Responses for `trex eval --responses`: id + response text from whatever `trex generate` wrote.
void to_responses(const fs::path& generated, const fs::path& out) {
  JsonlReader r(generated);
  JsonlWriter w(out);
  while (auto j = r.next()) {
    std::string text;
    for (const char* k : {"response", "completion", "text", "output"})
      if (j->contains(k) && (*j)[k].is_string()) {
        text = (*j)[k];
        break;
      }
    w.write(Json{{"id", (*j)["id"]}, {"response", text}});
  }
  w.commit();
}

fs::path latest_checkpoint(const fs::path& train_out) {
  fs::path marker = train_out / "latest";
  if (!fs::exists(marker)) throw Error("no checkpoint in " + train_out.string());
  std::string name = read_file(marker);
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  return train_out / name;
}

// A run folder keeps its base model: a rerun asking for another window would otherwise reuse it silently.
// Checked before any stage runs, so a refused rerun leaves the folder as it was.
void check_base_window(const fs::path& base, int window) {
  if (!fs::exists(base / "config.json")) return;
  if (int w = model::ModelConfig::from_hf_json(base / "config.json").sliding_window; w != window)
    throw Error(SourceLocation{(base / "config.json").string()},
                fmt::format("this run folder's base model has sliding_window {}, the plan asks for {}; use another "
                            "--out (or --sliding-window {})",
                            w, window, w));
}

}  // namespace

fs::path run_pipeline(const RunOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  fs::path out = fs::absolute(o.out);
  fs::create_directories(out);
  fs::path bin = o.trex_bin.empty() ? fs::read_symlink("/proc/self/exe") : o.trex_bin;
  StageRunner runner(bin, out);
  Plan p = make_plan(o);
  std::string seed = std::to_string(o.seed);
  Json stages = Json::array();
  auto record = [&](const StageRecord& r) { stages.push_back(r.json); };
  // Glue steps (in-process work between stages) are recorded like stages: redone when their input changed,
  // so a new test set or SFT selection is never paired with an earlier run's prompts or responses.
  auto glue = [&](const std::string& name, const std::vector<fs::path>& inputs, const std::vector<fs::path>& outputs,
                  const std::function<void()>& fn) { record(runner.run_step(name, inputs, outputs, fn)); };

  fs::path base = out / "ckpt-base";
  check_base_window(base, p.sliding_window);
  fs::path data = out / "data";
  std::vector<std::string> synth_args = {"synth", "--count", std::to_string(p.synth_count), "--seed", seed, "--out", data.string(),
                                         "--test-count", std::to_string(p.test_count), "--test-task", p.task, "--mix",
                                         "difficulty=small:1,medium:1", "--mix", p.task_mix, "--no-progress"};
  for (const auto& m : o.synth_mix) synth_args.insert(synth_args.end(), {"--mix", m});
  for (const auto& m : o.test_mix) synth_args.insert(synth_args.end(), {"--test-mix", m});
  record(runner.run({"synth",
                     synth_args,
                     {},
                     {data / "sft.jsonl", data / "cpt.jsonl", data / "test.jsonl", data / "manifest.json"},
                     o.seed}));
  fs::path tok = out / "tokenizer.json";
  record(runner.run({"tokenizer",
                     {"tokenizer", "train", "-i", (data / "cpt.jsonl").string(), "-o", tok.string(), "--vocab-size",
                      std::to_string(p.vocab)},
                     {data / "cpt.jsonl"},
                     {tok}}));
  fs::path sft_task = data / ("sft_" + p.task + ".jsonl");
  glue("select-sft", {data / "sft.jsonl"}, {sft_task}, [&] { select_sft(data / "sft.jsonl", sft_task, p.task); });
  record(runner.run({"pack-cpt",
                     {"data", "pack", "--mode", "cpt", "-t", tok.string(), "-i", (data / "cpt.jsonl").string(), "-o",
                      (out / "packed" / "cpt").string(), "--seed", seed},
                     {tok, data / "cpt.jsonl"},
                     {out / "packed" / "cpt"},
                     o.seed}));
  record(runner.run({"pack-sft",
                     {"data", "pack", "--mode", "sft", "-t", tok.string(), "-i", sft_task.string(), "-o",
                      (out / "packed" / "sft").string(), "--seq-len", std::to_string(p.sft_seq_len), "--truncate", "right",
                      "--seed", seed},
                     {tok, sft_task},
                     {out / "packed" / "sft"},
                     o.seed}));

  // The base model: the preset with the trained tokenizer's vocabulary, randomly initialised once. It is the
  // run folder's identity (no inputs: kept across reruns; check_base_window refuses another window).
  glue("init-base", {}, {base / "config.json"}, [&] {
    model::ModelConfig cfg = model::ModelConfig::preset(o.preset);
    cfg.vocab_size = int64_t(text::Tokenizer::load(tok).vocab_size());
    cfg.sliding_window = p.sliding_window;
    cfg.validate();
    model::Model m(cfg);
    m.init(o.seed);
    fs::create_directories(base);
    // The tokenizer beside the weights makes the base folder a whole Hugging Face model folder, as the trained ones.
    model::save_weights(base, m.store(), cfg, model::DType::F32, {.tokenizer = tok});
  });
  auto train = [&](const std::string& name, const std::string& mode, const fs::path& init, const fs::path& packed,
                   int steps, const fs::path& dir) {
    std::vector<std::string> args = {"train", "--mode", mode, "--init", init.string(), "--data", packed.string(),
                                     "--out", dir.string(), "--steps", std::to_string(steps), "--seed", seed,
                                     "--micro-batch", std::to_string(p.micro_batch), "--seq-len",
                                     std::to_string(mode == "cpt" ? p.seq_len : p.sft_seq_len), "--save-every", "0", "--keep", "1", "--quiet",
                                     "--lr", std::to_string(mode == "cpt" ? p.cpt_lr : p.sft_lr)};
    if (mode == "sft") args.push_back("--freeze-router");
    if (p.matmul != "fp32") args.insert(args.end(), {"--matmul", p.matmul});
    if (o.device != "cpu") args.insert(args.end(), {"--device", o.device});
    auto progress = [metrics = dir / "metrics.jsonl", steps] { return read_train_progress(metrics, steps); };
    record(runner.run({name, args, {init, packed}, {dir / "latest", dir / "metrics.jsonl"}, o.seed, dir, progress}));
  };
  fs::path ck_cpt = out / "train" / "cpt", ck_cpt_sft = out / "train" / "cpt_sft", ck_sft = out / "train" / "sft_only";
  train("train-cpt", "cpt", base, out / "packed" / "cpt", p.cpt_steps, ck_cpt);
  train("train-cpt-sft", "sft", latest_checkpoint(ck_cpt), out / "packed" / "sft", p.sft_steps, ck_cpt_sft);
  train("train-sft-only", "sft", base, out / "packed" / "sft", p.sft_steps, ck_sft);

  fs::path prompts = out / "eval" / "prompts.jsonl";
  fs::create_directories(out / "eval");
  glue("prompts", {data / "test.jsonl"}, {prompts}, [&] { write_prompts(data / "test.jsonl", prompts); });

  struct Route {
    std::string key, label;
    fs::path ckpt;
    std::vector<fs::path> metrics;
  };
  std::vector<Route> routes = {{"base", "Base (random init)", base, {}},
                               {"sft_only", "SFT only", latest_checkpoint(ck_sft), {ck_sft / "metrics.jsonl"}},
                               {"cpt_sft", "CPT → SFT", latest_checkpoint(ck_cpt_sft),
                                {ck_cpt / "metrics.jsonl", ck_cpt_sft / "metrics.jsonl"}}};
  ReportInputs rin;
  rin.run_dir = out;
  rin.test_jsonl = data / "test.jsonl";
  rin.manifest_json = data / "manifest.json";
  rin.run_json = out / "run.json";
  rin.preset = o.preset;
  rin.answer_style = o.answer_style;
  rin.matmul = p.matmul;
  // generation on the training device (trex generate --device cuda: the GPU decoder); evaluation on the CPU
  auto on_device = [&](std::vector<std::string> args) {
    if (o.device != "cpu") args.insert(args.end(), {"--device", o.device});
    return args;
  };
  for (const auto& r : routes) {
    fs::path gen = out / "eval" / (r.key + ".generated.jsonl");
    record(runner.run({"generate-" + r.key,
                       on_device({"generate", "--ckpt", r.ckpt.string(), "--tokenizer", tok.string(), "--input",
                                  prompts.string(), "--output", gen.string(), "--max-tokens",
                                  std::to_string(p.max_new_tokens), "--temperature", "0", "--batch", "8"}),
                       {r.ckpt, prompts, tok},
                       {gen}}));
    fs::path responses = out / "eval" / (r.key + ".responses.jsonl");
    glue("responses-" + r.key, {gen}, {responses}, [&] { to_responses(gen, responses); });
    fs::path eval_dir = out / "eval" / r.key;
    record(runner.run({"eval-" + r.key,
                       {"eval", "--responses", responses.string(), "--benchmarks", (data / "test.jsonl").string(),
                        "--style", p.eval_style, "--out", eval_dir.string(), "--concurrency", "2", "--json"},
                       {responses, data / "test.jsonl"},
                       {eval_dir / "summary.json"},
                       0,
                       eval_dir}));  // a fresh folder: trex eval would resume the earlier answers' results
    rin.routes.push_back({r.key, r.label, eval_dir / "test" / "results.jsonl", r.metrics, responses});
  }

  // The B4O-Feasible slice, each route through the same harness. Without an explicit --data a missing
  // benchmark folder skips it (the report says why); an explicit one that is missing stops the run.
  const int b4o_n = o.b4o_items >= 0 ? o.b4o_items : (o.quick ? 2 : 40);
  if (b4o_n > 0) {
    fs::path bdir;
    try {
      bdir = oreval::resolve_benchmarks_dir(o.benchmarks_dir.string());
      if (!fs::exists(bdir / "bench4opt_feasible.jsonl"))
        throw Error("no bench4opt_feasible.jsonl in " + bdir.string());
    } catch (const Error& e) {
      if (!o.benchmarks_dir.empty()) throw;
      rin.b4o_skipped = std::string("`") + e.what() + "`";
      log::warn("B4O-Feasible slice skipped: {}", e.what());
    }
    if (rin.b4o_skipped.empty()) {
      rin.b4o_items = b4o_n;
      fs::path bench = bdir / "bench4opt_feasible.jsonl";
      fs::path b4o_prompts = out / "eval" / "b4o_prompts.jsonl";
      glue("prompts-b4o-" + std::to_string(b4o_n), {bench}, {b4o_prompts},
           [&] { write_b4o_prompts(bench, b4o_n, b4o_prompts); });
      for (size_t i = 0; i < routes.size(); ++i) {
        const Route& r = routes[i];
        fs::path gen = out / "eval" / (r.key + ".b4o.generated.jsonl");
        // B4O statements run to ~1,500 tokens: a longer context than the held-out items need.
        record(runner.run({"generate-b4o-" + r.key,
                           on_device({"generate", "--ckpt", r.ckpt.string(), "--tokenizer", tok.string(), "--input",
                                      b4o_prompts.string(), "--output", gen.string(), "--max-tokens",
                                      std::to_string(p.max_new_tokens), "--temperature", "0", "--batch", "8",
                                      "--max-context", "4096"}),
                           {r.ckpt, b4o_prompts, tok},
                           {gen}}));
        fs::path responses = out / "eval" / (r.key + ".b4o.responses.jsonl");
        glue("responses-b4o-" + r.key, {gen}, {responses}, [&] { to_responses(gen, responses); });
        fs::path eval_dir = out / "eval" / "b4o" / r.key;
        record(runner.run({"eval-b4o-" + r.key,
                           {"eval", "--responses", responses.string(), "--benchmarks", "b4o_feasible", "--data",
                            bdir.string(), "--start", "0", "--end", std::to_string(b4o_n), "--style", p.eval_style,
                            "--out", eval_dir.string(), "--concurrency", "2", "--json"},
                           {responses, bench},
                           {eval_dir / "summary.json"},
                           0,
                           eval_dir}));
        rin.routes[i].b4o_results_jsonl = eval_dir / "b4o_feasible" / "results.jsonl";
      }
    }
  }

  Json run = {{"preset", o.preset},
              {"seed", o.seed},
              {"budget_minutes", o.budget_minutes},
              {"plan",
               {{"synth_count", p.synth_count}, {"test_count", p.test_count}, {"vocab", p.vocab},
                {"cpt_steps", p.cpt_steps}, {"sft_steps", p.sft_steps}, {"seq_len", p.seq_len}, {"sft_seq_len", p.sft_seq_len},
                {"micro_batch", p.micro_batch}, {"max_new_tokens", p.max_new_tokens}, {"sliding_window", p.sliding_window}, {"cpt_lr", p.cpt_lr},
                {"sft_lr", p.sft_lr}, {"answer_style", o.answer_style}, {"matmul", p.matmul},
                {"train_device", o.device}, {"generate_device", o.device}, {"b4o_items", rin.b4o_items}}},
              {"stages", stages},
              {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
  write_file_atomic(out / "run.json", run.dump(2) + "\n");
  write_report(rin);
  log::info("report: {}", (out / "report.md").string());
  return out / "report.md";
}

}  // namespace trex::pipeline
