// `trex synth --test-task code_only`: held-out items whose answer is a program reading data.json (B4O-Feasible
// style) — the prompt asks for it, the item carries its data and a reference program, and `trex eval --oracle`
// scores every reference program as a success. Other tasks are refused before anything is written.
#include <gtest/gtest.h>

#include "synth_support.hpp"

using namespace synth_test;

TEST(SynthTestTask, CodeOnlyItemsCarryDataAndTheirProgramsScore) {
  fs::path out = fresh_dir("test_task");
  int rc = 0;
  std::string log = run(synth_cmd(out, "--count 30 --test-count 12 --seed 5 --test-task code_only"), rc);
  ASSERT_EQ(rc, 0) << log;
  auto test = read_jsonl(out / "test.jsonl");
  ASSERT_EQ(test.size(), 12u);
  for (const auto& t : test) {
    EXPECT_EQ(t["metadata"]["task"], "code_only") << t["id"];
    EXPECT_NE(t["problem"].get<std::string>().find("data.json"), std::string::npos) << t["id"];
    EXPECT_TRUE(t["data"].is_object()) << t["id"];
    EXPECT_TRUE(fs::exists(out / t["lp_file"].get<std::string>())) << t["id"];
    EXPECT_FALSE(t["reference_code"].get<std::string>().empty()) << t["id"];
  }
  auto manifest = trex::parse_json_file(out / "manifest.json");
  EXPECT_EQ(manifest["options"]["test_task"], "code_only");
  log = run(std::string(TREX_BIN_PATH) + " eval --oracle --benchmarks " + (out / "test.jsonl").string() + " --out " +
                (out / "oracle").string() + " --json",
            rc);
  ASSERT_EQ(rc, 0) << log;
  auto summary = trex::parse_json_file(out / "oracle" / "summary.json");
  EXPECT_EQ(summary["benchmarks"][0]["n"], 12);
  EXPECT_EQ(summary["benchmarks"][0]["successes"], 12) << summary.dump();
  fs::remove_all(out);
}

TEST(SynthTestTask, OtherTasksAreRefused) {
  fs::path out = fresh_dir("test_task_bad");
  int rc = 0;
  std::string log = run(synth_cmd(out, "--count 5 --seed 5 --test-task repair"), rc);
  EXPECT_EQ(rc, 2) << log;
  EXPECT_NE(log.find("--test-task"), std::string::npos) << log;
  log = run(synth_cmd(out, "--count 5 --seed 5 --test-task nonsense"), rc);
  EXPECT_EQ(rc, 2) << log;
  EXPECT_FALSE(fs::exists(out / "sft.jsonl"));
}
