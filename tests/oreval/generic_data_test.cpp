// Generic benchmark files whose every item carries "data" follow the data-file protocol: the item's data is the
// answer program's data.json (as for B4O-Feasible); without data on every item, data.json holds the question.
// `trex run`'s code-answer route depends on this.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "oreval/benchmarks.hpp"
#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/jsonl.hpp"

namespace fs = std::filesystem;
using namespace trex::oreval;

namespace {

std::string item(const std::string& id, double answer, int cap, bool with_data) {
  trex::Json j = {{"id", id}, {"problem", "Maximise 2x with x at most the capacity in data.json."}, {"answer", answer}};
  if (with_data) j["data"] = {{"cap", cap}};
  return j.dump() + "\n";
}

const char* kProgram =
    "```python\nimport json\nimport gurobipy as gp\nfrom gurobipy import GRB\n\n"
    "with open(\"data.json\") as f:\n    data = json.load(f)\n"
    "model = gp.Model(\"cap\")\nx = model.addVar(lb=0, ub=data[\"cap\"], name=\"x\")\n"
    "model.setObjective(2 * x, GRB.MAXIMIZE)\nmodel.optimize()\nprint(f\"optimal_value = {model.ObjVal}\")\n```\n";

}  // namespace

TEST(GenericData, ProtocolFollowsTheItems) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_generic_data");
  trex::write_file_atomic(dir / "with.jsonl", item("a", 8, 4, true) + item("b", 10, 5, true));
  trex::write_file_atomic(dir / "mixed.jsonl", item("a", 8, 4, true) + item("b", 10, 5, false));
  EXPECT_EQ(load_benchmark((dir / "with.jsonl").string(), dir).prompt, PromptKind::B4oData);
  EXPECT_EQ(load_benchmark((dir / "mixed.jsonl").string(), dir).prompt, PromptKind::Chat);
  fs::remove_all(dir);
}

TEST(GenericData, CodeAnswersReadTheItemsData) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_generic_data_eval");
  trex::write_file_atomic(dir / "caps.jsonl", item("a", 8, 4, true) + item("b", 10, 5, true) + item("c", 7, 3, true));
  std::string responses;
  for (const char* id : {"a", "b", "c"}) responses += trex::Json{{"id", id}, {"response", kProgram}}.dump() + "\n";
  trex::write_file_atomic(dir / "responses.jsonl", responses);
  const std::string cmd = std::string(TREX_BIN_PATH) + " eval --responses " + (dir / "responses.jsonl").string() +
                          " --benchmarks " + (dir / "caps.jsonl").string() + " --style report --out " +
                          (dir / "out").string() + " --concurrency 2 > " + (dir / "log.txt").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << trex::read_file(dir / "log.txt");
  trex::JsonlReader rd(dir / "out" / "caps" / "results.jsonl");
  std::map<std::string, std::string> kind;
  while (auto j = rd.next()) kind[(*j)["id"]] = (*j)["kind"];
  // a and b: the program's value 2 * cap equals the gold; c's gold (7) is not 2 * 3
  EXPECT_EQ(kind["a"], "success");
  EXPECT_EQ(kind["b"], "success");
  EXPECT_EQ(kind["c"], "wrong_objective");
  fs::remove_all(dir);
}
