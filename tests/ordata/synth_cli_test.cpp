// `trex synth` end to end: exports consistent with the manifest, every exported LP re-solved with
// GLPK matches the stored objective, same seed => same bytes, interrupted + resumed => same files,
// bad options => clear errors and nothing written, no near-duplicate pair in 2,000 samples.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include "lp/lp_format.hpp"
#include "lp/solver.hpp"
#include "ordata/answers.hpp"
#include "ordata/dedup.hpp"
#include "ordata/gates.hpp"
#include "ordata/verify.hpp"
#include "synth_support.hpp"
#include "util/hash.hpp"

using namespace synth_test;
using trex::Json;

TEST(SynthCli, SmallRunIsConsistentAndGlpkAgrees) {
  fs::path dir = fresh_dir("small");
  int rc;
  std::string out = run(synth_cmd(dir, "--count 120 --test-count 20 --seed 7 --threads 2 --json"), rc);
  ASSERT_EQ(rc, 0) << out;
  auto sft = read_jsonl(dir / "sft.jsonl");
  auto cpt = read_jsonl(dir / "cpt.jsonl");
  auto test = read_jsonl(dir / "test.jsonl");
  Json man = trex::parse_json_file(dir / "manifest.json");
  ASSERT_EQ(sft.size(), 120u);
  EXPECT_EQ(man["counts"]["sft"], sft.size());
  EXPECT_EQ(man["counts"]["cpt"], cpt.size());
  EXPECT_EQ(man["counts"]["test"], test.size());
  EXPECT_EQ(test.size(), 20u);
  EXPECT_EQ(man["cpt_kinds"]["model_report"], 60);
  EXPECT_EQ(man["cpt_kinds"]["modeling_rationale"], 60);
  EXPECT_EQ(man["files"]["sft.jsonl"], trex::sha256_hex(trex::read_file(dir / "sft.jsonl")));

  std::map<std::string, std::map<std::string, int64_t>> recount;
  std::set<std::string> ids;
  std::set<uint64_t> train_seeds;
  int glpk_checked = 0;
  for (const auto& r : sft) {
    EXPECT_EQ(trex::ordata::quality_gate(r), "") << r["id"];
    EXPECT_TRUE(ids.insert(r["id"].get<std::string>()).second);
    const auto& m = r["metadata"];
    train_seeds.insert(m["seed"].get<uint64_t>());
    for (const char* g : {"structure", "mode", "difficulty", "task", "domain"}) recount[g][m[g].get<std::string>()]++;
    std::string lp = trex::ordata::extract_lp_block(r["messages"][1]["content"].get<std::string>());
    std::string task = m["task"];
    if (task == "code_only") {
      EXPECT_TRUE(lp.empty());
    } else {
      ASSERT_FALSE(lp.empty()) << r["id"];
      auto model = trex::lp::read_lp_string(lp);
      auto res = trex::lp::solve(model, trex::lp::Backend::Glpk);
      ASSERT_EQ(res.status, trex::lp::SolveStatus::Optimal) << r["id"] << "\n" << lp;
      EXPECT_TRUE(trex::ordata::objectives_match(res.objective, m["objective"].get<double>()))
          << r["id"] << ": GLPK " << res.objective << " vs stored " << m["objective"];
      ++glpk_checked;
    }
    if (m["mode"] == "DPS" || task == "code_only") {
      EXPECT_TRUE(fs::exists(dir / "files" / r["id"].get<std::string>() / "data.json")) << r["id"];
    }
  }
  EXPECT_GT(glpk_checked, 60);
  // Every exported code answer (full model, code only) was run through the gurobipy layer, and every LP re-solved.
  int64_t code_answers = recount["task"]["full_model"] + recount["task"]["code_only"];
  EXPECT_GT(code_answers, 30);
  EXPECT_EQ(man["verification"]["code_answers"], code_answers);
  EXPECT_EQ(man["verification"]["code_answers_run"], code_answers);
  EXPECT_GE(man["verification"]["programs_run"].get<int64_t>(), code_answers);
  EXPECT_GT(man["verification"]["code_answers_same_model"].get<int64_t>(), code_answers / 2);
  EXPECT_LE(man["verification"]["code_answers_same_model"].get<int64_t>(), code_answers);
  EXPECT_EQ(man["verification"]["lp_answers"], glpk_checked + int64_t(test.size()));
  EXPECT_EQ(man["verification"]["lp_answers_resolved"], man["verification"]["lp_answers"]);
  for (auto it = man["rejections"].begin(); it != man["rejections"].end(); ++it)
    EXPECT_NE(it.key().rfind("code_", 0), 0u) << "a generated program failed its check: " << it.key() << " x" << it.value();
  EXPECT_NE(out.find("\"code_answers_run\":" + std::to_string(code_answers)), std::string::npos) << out;
  for (const char* g : {"structure", "mode", "difficulty", "task", "domain"})
    for (auto it = man["buckets"][g].begin(); it != man["buckets"][g].end(); ++it)
      EXPECT_EQ(it.value().get<int64_t>(), recount[g][it.key()]) << g << " " << it.key();
  EXPECT_EQ(recount["task"].size(), 4u);
  EXPECT_EQ(recount["mode"].size(), 3u);
  for (size_t i = 0; i < cpt.size(); ++i) {
    EXPECT_EQ(cpt[i]["source_id"], sft[i]["id"]);
    std::string text = cpt[i]["text"];
    EXPECT_GE(text.size(), 400u);
    EXPECT_EQ(text.find("User:"), std::string::npos);
    EXPECT_EQ(text.find("Assistant:"), std::string::npos);
    EXPECT_NE(text.find("```python"), std::string::npos);
  }
  for (const auto& t : test) {
    std::string id = t["id"];
    EXPECT_FALSE(ids.count(id));
    EXPECT_EQ(train_seeds.count(t["metadata"]["seed"].get<uint64_t>()), 0u) << "test instance seed reused from training";
    EXPECT_EQ(trex::read_file(dir / t["lp_file"].get<std::string>()), t["reference_lp"].get<std::string>());
    auto res = trex::lp::solve(trex::lp::read_lp_string(t["reference_lp"].get<std::string>()), trex::lp::Backend::Glpk);
    ASSERT_EQ(res.status, trex::lp::SolveStatus::Optimal) << id;
    EXPECT_TRUE(trex::ordata::objectives_match(res.objective, t["answer"].get<double>())) << id;
    EXPECT_TRUE(t["problem"].is_string());
    EXPECT_TRUE(t["data"].is_object());
  }
  fs::remove_all(dir);
}

// A broken code answer (--corrupt-code-every: every 4th candidate's program gets a wrong objective) is caught
// by running it: rejected and counted as code_objective_mismatch, never exported; the test items' programs
// (--test-task code_only) are run too.
TEST(SynthCli, BrokenCodeAnswersAreCaught) {
  fs::path dir = fresh_dir("corrupt");
  int rc;
  std::string out = run(synth_cmd(dir, "--count 40 --test-count 6 --test-task code_only --seed 9 --threads 2 --corrupt-code-every 4 "
                                       "--mix task=code_only:1,full_model:1,lp_structure:1"),
                        rc);
  ASSERT_EQ(rc, 0) << out;
  auto sft = read_jsonl(dir / "sft.jsonl");
  auto test = read_jsonl(dir / "test.jsonl");
  Json man = trex::parse_json_file(dir / "manifest.json");
  ASSERT_EQ(sft.size(), 40u);
  ASSERT_EQ(test.size(), 6u);
  auto index_of = [](const std::string& id) { return std::stoll(id.substr(id.rfind('-') + 1)); };
  int64_t code_answers = 0;
  for (const auto& r : sft) {
    std::string task = r["metadata"]["task"];
    int64_t k = index_of(r["id"]);
    if (task == "full_model" || task == "code_only") {
      ++code_answers;
      EXPECT_NE(k % 4, 0) << r["id"] << ": a corrupted code answer was exported";
    }
    EXPECT_EQ(r["messages"][1]["content"].get<std::string>().find("2 * model.getObjective()"), std::string::npos) << r["id"];
  }
  for (const auto& t : test) {
    EXPECT_NE(index_of(t["id"]) % 4, 0) << t["id"];
    EXPECT_EQ(t["reference_code"].get<std::string>().find("2 * model.getObjective()"), std::string::npos) << t["id"];
  }
  int64_t caught = man["rejections"].value("code_objective_mismatch", int64_t(0));
  EXPECT_GE(caught, 5) << man["rejections"].dump();
  EXPECT_EQ(man["verification"]["code_answers"], code_answers + 6);
  EXPECT_EQ(man["verification"]["code_answers_run"], code_answers + 6);
  EXPECT_GE(man["verification"]["programs_run"].get<int64_t>(), code_answers + 6 + caught);
  fs::remove_all(dir);
}

// Also the code check's reference path (--code-solve-always: every program's model solved with CBC, none
// answered from the verified solve) gives the same bytes as the fast path.
TEST(SynthCli, SameSeedSameBytes) {
  fs::path a = fresh_dir("seed_a"), b = fresh_dir("seed_b"), c = fresh_dir("seed_c"), d = fresh_dir("seed_d");
  int rc;
  ASSERT_EQ((run(synth_cmd(a, "--count 50 --test-count 8 --seed 11 --threads 2"), rc), rc), 0);
  ASSERT_EQ((run(synth_cmd(b, "--count 50 --test-count 8 --seed 11 --threads 1"), rc), rc), 0);
  ASSERT_EQ((run(synth_cmd(c, "--count 50 --test-count 8 --seed 12 --threads 2"), rc), rc), 0);
  ASSERT_EQ((run(synth_cmd(d, "--count 50 --test-count 8 --seed 11 --threads 2 --code-solve-always"), rc), rc), 0);
  auto sa = snapshot(a), sb = snapshot(b), sc = snapshot(c), sd = snapshot(d);
  EXPECT_GT(sa.size(), 4u);
  EXPECT_TRUE(sa == sb) << "same seed, different bytes (threads 2 vs 1)";
  EXPECT_TRUE(sa == sd) << "the code check's reference path (--code-solve-always) changed the outputs";
  EXPECT_NE(sa["sft.jsonl"], sc["sft.jsonl"]);
  EXPECT_FALSE(fs::exists(a / ".synth-partial"));
  for (auto& p : {a, b, c, d}) fs::remove_all(p);
}

TEST(SynthCli, InterruptedRunResumesToTheSameFiles) {
  fs::path full = fresh_dir("full"), cut = fresh_dir("cut");
  std::string args = "--count 60 --test-count 10 --seed 5 --chunk-size 15";
  int rc;
  ASSERT_EQ((run(synth_cmd(full, args), rc), rc), 0);
  std::string out = run(synth_cmd(cut, args + " --interrupt-after-chunks 2"), rc);
  EXPECT_EQ(rc, 3) << out;
  EXPECT_FALSE(fs::exists(cut / "sft.jsonl"));
  EXPECT_TRUE(fs::exists(cut / ".synth-partial" / "train-00001.jsonl"));
  out = run(synth_cmd(cut, args + " --interrupt-after-chunks 1"), rc);  // a second interruption
  EXPECT_EQ(rc, 3) << out;
  // Resuming with other options is refused and changes nothing.
  out = run(synth_cmd(cut, "--count 61 --test-count 10 --seed 5 --chunk-size 15"), rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("interrupted run with different options"), std::string::npos) << out;
  out = run(synth_cmd(cut, args + " --json"), rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("\"resumed_chunks\":3"), std::string::npos) << out;
  EXPECT_TRUE(snapshot(full) == snapshot(cut));
  fs::remove_all(full);
  fs::remove_all(cut);
}

TEST(SynthCli, BadOptionsLeaveNothingBehind) {
  fs::path dir = fresh_dir("bad");
  struct Case {
    std::string args, message;
  };
  std::vector<Case> cases = {
      {"--count 0 --seed 1", "--count must be >= 1"},
      {"--count 5 --seed 1 --test-count -1", "--test-count must be >= 0"},
      {"--count 5 --seed 1 --threads 0", "--threads"},
      {"--count 5 --seed 1 --mix task=full_model:1,cooking:2", "unknown task 'cooking'"},
      {"--count 5 --seed 1 --mix colour=red:1", "unknown key 'colour'"},
      {"--count 5 --seed 1 --mix mode=DP:0", "all weights are zero"},
      {"--count 5 --seed 1 --mix mode=DP:x", "is not a number"},
      {"--count 5 --seed 1 --jaccard 1.5", "--jaccard"},
      {"--count 5 --seed abc", "seed"},
      {"--count 5 --seed 1 --llm-base-url localhost:1", "--llm-base-url"},
      {"--count 5 --seed 1 --code-time-limit 0", "--code-time-limit"},
  };
  for (const auto& c : cases) {
    int rc;
    std::string out = run(synth_cmd(dir, c.args), rc);
    EXPECT_NE(rc, 0) << c.args;
    EXPECT_NE(out.find(c.message), std::string::npos) << c.args << " -> " << out;
    EXPECT_FALSE(fs::exists(dir)) << c.args << " left output behind";
  }
  // --out naming an existing file; a corrupt checkpoint names its file.
  fs::path file = fresh_dir("file");
  trex::write_file_atomic(file, "x");
  int rc;
  std::string out = run(synth_cmd(file, "--count 5 --seed 1"), rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("is not a folder"), std::string::npos) << out;
  fs::remove(file);
  // Without the gurobipy layer's worker the code answers cannot be checked: refused before anything is written.
  out = run("TREX_PYTHON_SHIM=/nonexistent/python/shim " + synth_cmd(dir, "--count 5 --seed 1"), rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("synth_code_worker.py"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir));
  // ... unless no task produces code.
  out = run("TREX_PYTHON_SHIM=/nonexistent/python/shim " + synth_cmd(dir, "--count 5 --seed 1 --test-count 2 --mix task=lp_structure:1,repair:1"), rc);
  EXPECT_EQ(rc, 0) << out;
  fs::remove_all(dir);
  fs::create_directories(dir / ".synth-partial");
  trex::write_file_atomic(dir / ".synth-partial" / "state.json", "{ not json");
  out = run(synth_cmd(dir, "--count 5 --seed 1"), rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("state.json"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir / "sft.jsonl"));
  fs::remove_all(dir);
}

TEST(SynthCli, NoNearDuplicatePairInTwoThousandSamples) {
  fs::path dir = fresh_dir("jaccard");
  int rc;
  std::string out = run(synth_cmd(dir, "--count 2000 --test-count 0 --seed 3 --threads 2"), rc);
  ASSERT_EQ(rc, 0) << out;
  auto sft = read_jsonl(dir / "sft.jsonl");
  ASSERT_EQ(sft.size(), 2000u);
  std::vector<trex::ordata::TokenSet> sets;
  for (const auto& r : sft) sets.push_back(trex::ordata::token_set(r["messages"][0]["content"].get<std::string>()));
  auto pm = trex::ordata::max_jaccard_bruteforce(sets);
  EXPECT_LE(pm.value, 0.9) << sft[pm.i]["id"] << " vs " << sft[pm.j]["id"];
  std::set<std::string> structures;
  for (const auto& r : sft) structures.insert(r["metadata"]["structure"].get<std::string>());
  EXPECT_EQ(structures.size(), 10u);
  fs::remove_all(dir);
}

TEST(SynthCli, KilledRunResumesToTheSameFiles) {
  fs::path full = fresh_dir("kfull"), cut = fresh_dir("kcut");
  std::string args = "--count 80 --test-count 5 --seed 17 --chunk-size 10 --threads 1";
  int rc;
  ASSERT_EQ((run(synth_cmd(full, args), rc), rc), 0);
  // SIGKILL the run (trex itself, no shell in between) as soon as its first checkpoint exists.
  std::vector<std::string> argv_s = {"trex", "synth", "--no-progress", "--out", cut.string(), "--count", "80", "--test-count", "5",
                                     "--seed", "17", "--chunk-size", "10", "--threads", "1"};
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execv(TREX_BIN_PATH, argv.data());
    _exit(127);
  }
  for (int i = 0; i < 1500 && !fs::exists(cut / ".synth-partial" / "train-00000.jsonl"); ++i) usleep(20000);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status)) << "the run finished before it could be killed";
  EXPECT_FALSE(fs::exists(cut / "sft.jsonl"));
  std::string out = run(synth_cmd(cut, args + " --json"), rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_TRUE(snapshot(full) == snapshot(cut));
  fs::remove_all(full);
  fs::remove_all(cut);
}
