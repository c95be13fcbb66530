// `trex run --quick`: a shortened pipeline end to end. Every stage finishes, a rerun reuses them all, and
// every number in report.md is traceable: listed in report_numbers.json with a source file that exists,
// and the Pass@1 figures recomputed here from the results files agree; a rerun with another window is refused.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <regex>
#include <map>
#include <set>
#include <sstream>

#include "oreval/benchmarks.hpp"
#include "pipeline/report.hpp"
#include "pipeline/run.hpp"
#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"

namespace fs = std::filesystem;

namespace {

int run_trex(const std::vector<std::string>& args, const fs::path& log) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<std::string> copy = args;
    std::string bin = TREX_BIN_PATH;
    std::vector<char*> argv = {bin.data()};
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    FILE* f = std::fopen(log.c_str(), "w");
    ::dup2(fileno(f), 1);
    ::dup2(fileno(f), 2);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// The report's example answers: the blocks fenced with tildes, each with the item id of the line before it
// (the last code span) and whether that line says Correct or Failed.
struct ShownExample {
  std::string id, text;
  bool correct = false;
};
std::vector<ShownExample> shown_examples(const std::string& md, std::string* body_without) {
  std::vector<ShownExample> out;
  std::istringstream in(md);
  std::string line, last_header;
  while (std::getline(in, line)) {
    if (line.rfind("~~~~", 0) == 0 && line.find_first_not_of('~') == std::string::npos) {
      ShownExample ex;
      std::smatch m;
      std::string h = last_header;
      EXPECT_TRUE(std::regex_search(h, m, std::regex(R"(item `([^`]+)`)"))) << h;
      ex.id = m[1];
      ex.correct = h.rfind("Correct", 0) == 0;
      EXPECT_TRUE(ex.correct || h.rfind("Failed", 0) == 0) << h;
      std::string l;
      bool closed = false;
      while (std::getline(in, l)) {
        if (l == line) {
          closed = true;
          break;
        }
        ex.text += l + "\n";
      }
      EXPECT_TRUE(closed) << "unclosed example block";
      out.push_back(ex);
      continue;
    }
    if (!line.empty()) last_header = line;
    *body_without += line + "\n";
  }
  return out;
}

std::map<std::string, trex::Json> first_by_id(const fs::path& jsonl) {
  std::map<std::string, trex::Json> out;
  trex::JsonlReader r(jsonl);
  while (auto j = r.next()) out.emplace((*j)["id"].get<std::string>(), *j);
  return out;
}

// Every number printed in report.md is listed in report_numbers.json with an existing source, and the figures
// recomputed here from the per-item results agree with the listed ones: Pass@1 and answer progress per route,
// the paired CPT -> SFT minus SFT-only difference and its interval, the B4O-Feasible slice; the example answers
// are the model's text as written (a prefix of its response) with the outcome the results file gives.
void expect_report_traced(const fs::path& out) {
  std::string md = trex::read_file(out / "report.md");
  trex::Json numbers = trex::parse_json_file(out / "report_numbers.json");
  std::set<std::string> listed;
  for (const auto& e : numbers) {
    std::string text = e["text"];
    listed.insert(text);
    if (!text.empty() && (text[0] == '+' || text[0] == '-')) listed.insert(text.substr(1));  // signed differences
    std::string src = e["source"];
    const std::size_t plus = src.find(" + ");  // a figure from two files: "a + b"
    for (const std::string& part : {src.substr(0, plus), plus == std::string::npos ? src : src.substr(plus + 3)})
      EXPECT_TRUE(fs::exists(out / part) || fs::exists(fs::path(TREX_SOURCE_DIR) / part)) << src;
  }
  // The example answers are the model's text, not report numbers: checked against the responses file instead.
  std::string body;
  auto examples = shown_examples(md, &body);
  auto responses = first_by_id(out / "eval" / "cpt_sft.responses.jsonl");
  auto results = first_by_id(out / "eval" / "cpt_sft" / "test" / "results.jsonl");
  for (const auto& ex : examples) {
    ASSERT_TRUE(responses.count(ex.id)) << ex.id;
    std::string response = responses[ex.id]["response"];
    if (!response.empty() && response.back() != '\n') response += '\n';  // the block ends its last line
    EXPECT_EQ(response.compare(0, ex.text.size(), ex.text), 0) << ex.id << " is not shown as the model wrote it";
    ASSERT_TRUE(results.count(ex.id)) << ex.id;
    EXPECT_EQ(results[ex.id]["success"].get<bool>(), ex.correct) << ex.id;
  }
  bool any_success = false, any_failure = false;
  for (auto& [id, r] : results) (r["success"].get<bool>() ? any_success : any_failure) = true;
  EXPECT_EQ(int(examples.size()), int(any_success) + int(any_failure)) << "one correct and one failed answer, where the run has them";

  body = std::regex_replace(body, std::regex(R"(\]\([^)]*\))"), "]");  // figure paths
  body = std::regex_replace(body, std::regex(R"(`[^`]*`)"), "");       // code spans (file names, presets)
  body = std::regex_replace(body, std::regex(R"(Pass@1|1e-6|within 1 %)"), "");  // the protocol's names
  std::regex num(R"((^|[^A-Za-z0-9_.])(\d+(\.\d+)?)(?![A-Za-z0-9_]))");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), num); it != std::sregex_iterator(); ++it) {
    std::string n = (*it)[2];
    EXPECT_TRUE(listed.count(n)) << "number '" << n << "' in report.md is not traced";
  }
  auto listed_value = [&](const std::string& what) -> std::optional<double> {
    for (const auto& e : numbers)
      if (e["what"] == what) return e["value"].get<double>();
    return std::nullopt;
  };
  trex::Json run = trex::parse_json_file(out / "run.json");
  const int b4o_items = run["plan"].value("b4o_items", 0);
  std::vector<std::string> b4o_ids;  // the slice: the benchmark file's first b4o_items ids in file order
  if (b4o_items > 0) {
    trex::JsonlReader bench(trex::oreval::resolve_benchmarks_dir("") / "bench4opt_feasible.jsonl");
    while (auto j = bench.next())
      if (int(b4o_ids.size()) < b4o_items) b4o_ids.push_back((*j)["id"]);
    EXPECT_EQ(listed_value("b4o slice items (plan)"), b4o_items);
  }
  for (const std::string route : {"base", "sft_only", "cpt_sft"}) {
    fs::path results = out / "eval" / route / "test" / "results.jsonl";
    auto scores = trex::pipeline::bucket_scores(results, out / "data" / "test.jsonl");
    ASSERT_FALSE(scores.empty());
    for (auto& [bucket, s] : scores) {
      auto v = listed_value(route + " pass@1 bucket " + bucket);
      ASSERT_TRUE(v) << route << " " << bucket;
      EXPECT_NEAR(*v, s.pass1(), 1e-9);
    }
    auto f = trex::pipeline::answer_funnel(results);
    EXPECT_EQ(listed_value(route + " funnel answered"), f.answered) << route;
    EXPECT_EQ(listed_value(route + " funnel solved"), f.solved) << route;
    EXPECT_EQ(listed_value(route + " funnel optimal"), f.optimal) << route;
    EXPECT_EQ(listed_value(route + " funnel within 1%"), f.near) << route;
    EXPECT_EQ(listed_value(route + " funnel successes"), f.successes) << route;
    EXPECT_EQ(f.successes, scores.back().second.successes) << route;
    EXPECT_TRUE(f.answered >= f.solved && f.solved >= f.optimal && f.optimal >= f.near && f.near >= f.successes) << route;
    if (b4o_items > 0) {
      fs::path b4o = out / "eval" / "b4o" / route / "b4o_feasible" / "results.jsonl";
      auto bf = trex::pipeline::answer_funnel(b4o);
      EXPECT_EQ(bf.n, b4o_items) << route;
      EXPECT_EQ(listed_value(route + " b4o items"), bf.n) << route;
      EXPECT_EQ(listed_value(route + " b4o successes"), bf.successes) << route;
      EXPECT_NEAR(*listed_value(route + " b4o pass@1"), 100.0 * bf.successes / bf.n, 1e-9) << route;
      EXPECT_EQ(listed_value(route + " b4o answered"), bf.answered) << route;
      EXPECT_EQ(listed_value(route + " b4o solved"), bf.solved) << route;
      EXPECT_EQ(listed_value(route + " b4o optimal"), bf.optimal) << route;
      EXPECT_EQ(listed_value(route + " b4o within 1%"), bf.near) << route;
      std::set<std::string> ids;
      for (auto& [id, r] : first_by_id(b4o)) ids.insert(id);
      EXPECT_EQ(ids, std::set<std::string>(b4o_ids.begin(), b4o_ids.end())) << route;
    }
  }
  // The paired difference, recomputed from the two routes' results.
  auto d = trex::pipeline::paired_difference(out / "eval" / "cpt_sft" / "test" / "results.jsonl",
                                             out / "eval" / "sft_only" / "test" / "results.jsonl");
  EXPECT_NEAR(*listed_value("difference cpt_sft - sft_only, points"), d.diff, 1e-9);
  EXPECT_NEAR(*listed_value("difference interval low, points"), d.lo, 1e-9);
  EXPECT_NEAR(*listed_value("difference interval high, points"), d.hi, 1e-9);
  EXPECT_NEAR(*listed_value("difference McNemar exact p"), d.mcnemar_p, 1e-12);
  EXPECT_EQ(listed_value("difference paired items"), d.n);
  EXPECT_EQ(listed_value("difference items only cpt_sft solves"), d.only_a);
  EXPECT_EQ(listed_value("difference items only sft_only solves"), d.only_b);
  EXPECT_EQ(listed_value("bootstrap resamples"), 10000);
  EXPECT_LE(d.lo, d.diff);
  EXPECT_GE(d.hi, d.diff);
}

}  // namespace

// The default answer style, code (a gurobipy program reading data.json): the report is traceable, a rerun reuses
// every stage, and a rerun with another window is refused.
TEST(TrexRun, QuickPipelineReportIsTraceableAndRerunReusesStages) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_run_test");
  fs::path out = dir / "run";
  ASSERT_EQ(run_trex({"run", "--quick", "--out", out.string()}, dir / "first.log"), 0)
      << trex::read_file(dir / "first.log");
  ASSERT_TRUE(fs::exists(out / "report.md"));
  ASSERT_TRUE(fs::exists(out / "report.html"));
  ASSERT_TRUE(fs::exists(out / "figures" / "loss.svg"));
  trex::Json run = trex::parse_json_file(out / "run.json");
  ASSERT_GE(run["stages"].size(), 10u);
  for (const auto& s : run["stages"]) EXPECT_EQ(s["status"], "done") << s.dump();
  EXPECT_EQ(run["plan"]["answer_style"], "code");
  for (const auto& s : run["stages"]) {
    if (s["name"] == "eval-b4o-cpt_sft") {  // the B4O slice goes through trex eval's built-in benchmark, sliced
      EXPECT_NE(s["command"].get<std::string>().find("--benchmarks b4o_feasible --data "), std::string::npos) << s.dump();
    }
  }

  expect_report_traced(out);

  // Every model folder the run writes is also a whole Hugging Face model folder (issue #22), the base one too.
  std::vector<fs::path> ckpts = {out / "ckpt-base"};
  for (const char* route : {"cpt", "cpt_sft", "sft_only"}) {
    fs::path train = out / "train" / route;
    std::string name = trex::read_file(train / "latest");
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
    ckpts.push_back(train / name);
  }
  for (const fs::path& ckpt : ckpts)
    for (const char* f : {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"})
      EXPECT_TRUE(fs::exists(ckpt / f)) << ckpt / f;

  // A rerun reuses every finished stage.
  ASSERT_EQ(run_trex({"run", "--quick", "--out", out.string(), "--answer-style", "code"}, dir / "second.log"), 0)
      << trex::read_file(dir / "second.log");
  trex::Json again = trex::parse_json_file(out / "run.json");
  for (const auto& s : again["stages"]) EXPECT_TRUE(s["skipped"].get<bool>()) << s["name"];

  // A rerun asking for another attention window does not reuse the folder's base model silently.
  EXPECT_NE(run_trex({"run", "--quick", "--out", out.string(), "--answer-style", "code", "--sliding-window", "64"},
                     dir / "third.log"),
            0);
  std::string third = trex::read_file(dir / "third.log");
  EXPECT_NE(third.find("ckpt-base/config.json: this run folder's base model has sliding_window 256"), std::string::npos)
      << third;
  fs::remove_all(dir);
}

// The LP answer style (issue #8's; `--answer-style lp`): the held-out items and the SFT set are lp_structure conversations (LP-file
// answers), the evaluator reads and solves LP blocks, and the report says so and is traceable. Switching the
// style in the same folder redoes the data and never pairs the new test set with the old prompts.
TEST(TrexRun, QuickPipelineInTheLpAnswerStyleAndAStyleSwitch) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_run_lp_test");
  fs::path out = dir / "run";
  ASSERT_EQ(run_trex({"run", "--quick", "--out", out.string(), "--answer-style", "lp"}, dir / "lp.log"), 0)
      << trex::read_file(dir / "lp.log");
  trex::Json run = trex::parse_json_file(out / "run.json");
  EXPECT_EQ(run["plan"]["answer_style"], "lp");
  std::string synth_cmd, eval_cmd;
  for (const auto& s : run["stages"]) {
    if (s["name"] == "synth") synth_cmd = s["command"];
    if (s["name"] == "eval-cpt_sft") eval_cmd = s["command"];
  }
  EXPECT_NE(synth_cmd.find("--test-task lp_structure"), std::string::npos) << synth_cmd;
  EXPECT_NE(synth_cmd.find("task=lp_structure:4,"), std::string::npos) << synth_cmd;
  EXPECT_NE(eval_cmd.find("--style lp"), std::string::npos) << eval_cmd;

  trex::JsonlReader sft(out / "data" / "sft_lp_structure.jsonl");
  int n = 0;
  while (auto j = sft.next()) {
    ++n;
    const std::string answer = (*j)["messages"].back()["content"];
    EXPECT_EQ(answer.rfind("```lp\n", 0), 0u) << answer.substr(0, 80);
  }
  EXPECT_GT(n, 0);
  trex::JsonlReader test(out / "data" / "test.jsonl");
  while (auto j = test.next()) EXPECT_EQ((*j)["metadata"]["task"], "lp_structure");
  // Whatever the quick models wrote was judged as LP blocks (no program was run).
  trex::JsonlReader results(out / "eval" / "cpt_sft" / "test" / "results.jsonl");
  int scored = 0;
  while (auto j = results.next()) {
    ++scored;
    const std::string kind = (*j)["kind"];
    const bool lp_outcome = kind == "success" || kind.rfind("lp_", 0) == 0 || kind == "no_code" ||
                            kind == "not_optimal" || kind == "unsupported" || kind == "wrong_objective";
    EXPECT_TRUE(lp_outcome) << kind;
  }
  EXPECT_EQ(scored, 4);
  EXPECT_NE(trex::read_file(out / "report.md").find("an LP-file block"), std::string::npos);
  expect_report_traced(out);

  // The folder's base model has the LP style's 1,024-token window: code answers with the default window are
  // refused, with the same window they redo the data, the SFT set and the prompts for the new test set.
  EXPECT_NE(run_trex({"run", "--quick", "--out", out.string(), "--answer-style", "code"}, dir / "refused.log"), 0);
  EXPECT_NE(trex::read_file(dir / "refused.log").find("has sliding_window 1024, the plan asks for 256"), std::string::npos)
      << trex::read_file(dir / "refused.log");
  EXPECT_EQ(trex::read_file(dir / "refused.log").find("stage synth"), std::string::npos) << "refused after work began";
  ASSERT_EQ(run_trex({"run", "--quick", "--out", out.string(), "--answer-style", "code", "--sliding-window", "1024"},
                     dir / "code.log"),
            0)
      << trex::read_file(dir / "code.log");
  std::vector<std::string> problems;
  trex::JsonlReader test2(out / "data" / "test.jsonl");
  while (auto j = test2.next()) {
    EXPECT_EQ((*j)["metadata"]["task"], "code_only");
    problems.push_back((*j)["problem"]);
  }
  trex::JsonlReader prompts(out / "eval" / "prompts.jsonl");
  size_t i = 0;
  while (auto j = prompts.next()) {
    ASSERT_LT(i, problems.size());
    EXPECT_EQ((*j)["messages"][0]["content"], problems[i++]);
  }
  EXPECT_EQ(i, problems.size());
  EXPECT_TRUE(fs::exists(out / "data" / "sft_code_only.jsonl"));
  EXPECT_NE(trex::read_file(out / "report.md").find("a gurobipy program that reads the item's data.json"), std::string::npos);
  expect_report_traced(out);
  fs::remove_all(dir);
}

// `--matmul bf16` reaches every trainer (and run.json); on a CPU without AVX512_BF16 the run stops at the first
// training stage with the trainer's clear refusal instead of training in fp32 unasked.
TEST(TrexRun, MatmulChoiceReachesTheTrainers) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_run_bf16_test");
  fs::path out = dir / "run";
  int rc = run_trex({"run", "--quick", "--out", out.string(), "--matmul", "bf16"}, dir / "bf16.log");
  const std::string log = trex::read_file(dir / "bf16.log");
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512bf16")) {
    EXPECT_NE(rc, 0);
    EXPECT_NE(log.find("stage train-cpt failed"), std::string::npos) << log;
    EXPECT_NE(log.find("AVX512_BF16"), std::string::npos) << log;
    fs::remove_all(dir);
    return;
  }
  ASSERT_EQ(rc, 0) << log;
  trex::Json run = trex::parse_json_file(out / "run.json");
  EXPECT_EQ(run["plan"]["matmul"], "bf16");
  int trainers = 0;
  for (const auto& s : run["stages"]) {
    const std::string name = s["name"], cmd = s.value("command", "");
    if (name.rfind("train-", 0) != 0) continue;
    ++trainers;
    EXPECT_NE(cmd.find("--matmul bf16"), std::string::npos) << cmd;
    EXPECT_NE(trex::read_file(out / "logs" / (name + ".log")).find("matmul bf16"), std::string::npos) << name;
  }
  EXPECT_EQ(trainers, 3);
  fs::remove_all(dir);
}

// `RunOptions::device = "cuda"` (what `trex run --device cuda` sets once a device is there) reaches the three
// trainers, the generation stages and run.json. Without a device the first training stage stops the run with the trainer's reason; with
// one the run finishes and every trainer's command carries the device.
TEST(TrexRun, CudaDeviceReachesTheTrainersAndTheGenerators) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_run_cuda_test");
  trex::pipeline::RunOptions o;
  o.quick = true;
  o.out = dir / "run";
  o.device = "cuda";
  o.trex_bin = TREX_BIN_PATH;
  std::string error;
  try {
    trex::pipeline::run_pipeline(o);
  } catch (const trex::Error& e) {
    error = e.what();
  }
  if (!error.empty()) {
    EXPECT_NE(error.find("train-cpt"), std::string::npos) << error;
    EXPECT_NE(error.find("trex train --device cuda: CUDA asked for but"), std::string::npos) << error;
    EXPECT_FALSE(fs::exists(o.out / "train" / "cpt" / "latest"));
  } else {
    trex::Json run = trex::parse_json_file(o.out / "run.json");
    EXPECT_EQ(run["plan"]["train_device"], "cuda");
    EXPECT_EQ(run["plan"]["matmul"], "bf16");  // auto on a GPU: its bf16 products
    EXPECT_EQ(run["plan"]["generate_device"], "cuda");
    int trainers = 0, generators = 0;
    for (const auto& st : run["stages"]) {
      const std::string name = st["name"];
      const bool train = name.rfind("train-", 0) == 0, gen = name.rfind("generate-", 0) == 0;
      trainers += train;
      generators += gen;
      if (train || gen) {
        EXPECT_NE(st.value("command", "").find("--device cuda"), std::string::npos) << st.dump();
      }
      if (name.rfind("eval-", 0) == 0) {
        EXPECT_EQ(st.value("command", "").find("--device"), std::string::npos) << st.dump();
      }
    }
    EXPECT_EQ(trainers, 3);
    EXPECT_GE(generators, 3);
  }
  try {
    o.device = "gpu";
    trex::pipeline::run_pipeline(o);
    ADD_FAILURE() << "device 'gpu' was accepted";
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown --device 'gpu'"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// Transfer across families (issue #26's held-out check): `--synth-mix` leaves a family out of the training data,
// `--test-mix` draws the test items from it; they are marked held out, the report has the transfer table, and a
// bad spec is refused before the run folder is made.
TEST(TrexRun, HeldOutFamilyTestItemsAndTheTransferTable) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_run_heldout_test");
  fs::path out = dir / "run";
  ASSERT_EQ(run_trex({"run", "--quick", "--out", out.string(), "--b4o-items", "0", "--synth-mix",
                      "structure=classic:1,transportation:0", "--test-mix", "structure=transportation:1,knapsack:1"},
                     dir / "run.log"),
            0)
      << trex::read_file(dir / "run.log");
  auto read_jsonl = [](const fs::path& p) {
    std::vector<trex::Json> v;
    trex::JsonlReader r(p);
    while (auto j = r.next()) v.push_back(*j);
    return v;
  };
  for (const auto& j : read_jsonl(out / "data" / "sft.jsonl")) {
    EXPECT_NE(j["metadata"]["structure"], "transportation");
    EXPECT_NE(j["metadata"]["structure"], "knapsack");
  }
  int held_out = 0;
  for (const auto& j : read_jsonl(out / "data" / "test.jsonl")) held_out += j["metadata"].value("held_out_structure", false);
  EXPECT_GT(held_out, 0);
  const std::string report = trex::read_file(out / "report.md");
  EXPECT_NE(report.find("Transfer across families"), std::string::npos) << report;
  EXPECT_NE(report.find("| route | held-out families | trained families | all |"), std::string::npos) << report;
  expect_report_traced(out);

  fs::path bad = dir / "bad";
  EXPECT_NE(run_trex({"run", "--quick", "--out", bad.string(), "--test-mix", "structure=nope:1"}, dir / "bad.log"), 0);
  EXPECT_NE(trex::read_file(dir / "bad.log").find("unknown structure 'nope'"), std::string::npos) << trex::read_file(dir / "bad.log");
  EXPECT_FALSE(fs::exists(bad));
  fs::remove_all(dir);
}
