// Code answers through the gurobipy-compatible layer (python/), the reference path: a sample of code-only
// answers (reading data.json, or data.json + CSV tables) and full-model answers is executed with a fresh
// python3 per program, in a folder holding only the sample's exported files, solving through a `trex solve`
// subprocess (the layer's default), and must print the verified objective. The pipeline runs every code
// answer on the fast path (ordata/code_check.hpp: one Python worker per thread, solves answered in-process);
// this test checks the exported programs also work the way a user would run them.
#include <set>

#include "ordata/verify.hpp"
#include "synth_support.hpp"

using namespace synth_test;

static std::string python_block(const std::string& text) {
  const std::string open = "```python\n";
  size_t s = text.find(open);
  if (s == std::string::npos) return "";
  s += open.size();
  size_t e = text.find("```", s);
  return e == std::string::npos ? "" : text.substr(s, e - s);
}

TEST(PythonAnswers, CodeAnswersReproduceTheObjective) {
  fs::path src(TREX_SOURCE_DIR);
  ASSERT_TRUE(fs::exists(src / "python" / "shim" / "gurobipy")) << "the gurobipy-compatible layer (python/shim) is missing";
  fs::path dir = fresh_dir("python");
  int rc;
  std::string out =
      run(synth_cmd(dir, "--count 150 --test-count 0 --seed 21 --mix task=code_only:2,full_model:1 --mix mode=DPS:3,DP:1,DT:1"), rc);
  ASSERT_EQ(rc, 0) << out;
  auto sft = read_jsonl(dir / "sft.jsonl");
  // One sample per structure and kind: code-only with data.json, code-only with data.json + CSV, full model.
  std::set<std::pair<std::string, std::string>> seen;
  std::map<std::string, int> per_structure, per_kind;
  int checked = 0;
  std::string env = "PYTHONPATH=" + (src / "python" / "shim").string() + ":" + (src / "python").string() +
                    " TREX_BIN=" + std::string(TREX_BIN_PATH) + " OPENBLAS_NUM_THREADS=1";
  for (const auto& r : sft) {
    std::string structure = r["metadata"]["structure"];
    std::string kind = r["metadata"]["task"] == "code_only" ? "code_" + r["metadata"]["data_files"].get<std::string>() : "full_model";
    if (!seen.insert({structure, kind}).second) continue;
    ++per_structure[structure];
    ++per_kind[kind];
    std::string id = r["id"];
    std::string code = python_block(r["messages"][1]["content"].get<std::string>());
    ASSERT_FALSE(code.empty()) << id;
    fs::path work = dir / "run" / id;
    fs::create_directories(work);
    trex::write_file_atomic(work / "answer.py", code);
    if (r["metadata"]["task"] == "code_only")
      for (const auto& f : fs::directory_iterator(dir / "files" / id)) fs::copy_file(f.path(), work / f.path().filename());
    std::string res = run("cd " + work.string() + " && env " + env + " /usr/bin/python3 answer.py", rc);
    ASSERT_EQ(rc, 0) << id << ":\n" << res;
    size_t p = res.rfind("optimal_value = ");
    ASSERT_NE(p, std::string::npos) << id << ":\n" << res;
    double value = std::stod(res.substr(p + 16));
    EXPECT_TRUE(trex::ordata::objectives_match(value, r["metadata"]["objective"].get<double>()))
        << id << " (" << structure << "): python " << value << " vs verified " << r["metadata"]["objective"];
    ++checked;
  }
  EXPECT_GE(checked, 25);
  EXPECT_EQ(per_structure.size(), 10u);
  EXPECT_GE(per_kind["code_json_csv"], 8) << "too few code answers reading CSV files were checked";
  EXPECT_GE(per_kind["code_json"], 8);
  EXPECT_GE(per_kind["full_model"], 8);
  fs::remove_all(dir);
}
