// Multi-rank runs of `trex dist-train` under mpirun (root flags and --oversubscribe as in MACHINE.md §4):
// data-parallel equivalence with one process over 50 steps, overlapped vs blocking all-reduce, and faults
// (a rank that dies, a rank that hangs) ending the job with a clear error in bounded time.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

struct RunResult {
  int status = -1;
  double seconds = 0;
  std::string output;
};

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("trex_dist_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Runs trex dist-train with `np` ranks (np == 0: without mpirun).
RunResult run(int np, const std::string& args, const fs::path& dir, const std::string& tag) {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  ::setenv("OMP_NUM_THREADS", "1", 1);
  ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
  const fs::path log = dir / (tag + ".log");
  std::string cmd = np > 0 ? "mpirun -np " + std::to_string(np) + " --oversubscribe " : std::string();
  cmd += std::string(TREX_BIN_PATH) + " dist-train " + args + " > " + log.string() + " 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r;
  r.status = std::system(cmd.c_str());
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  r.output = ss.str();
  return r;
}

std::vector<double> losses(const fs::path& metrics) {
  std::vector<double> out;
  std::ifstream in(metrics);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line).at("loss").get<double>());
  return out;
}

const std::string kCommon = " --config tiny --seq-len 32 --global-batch 2 --seed 7";

TEST(DistTrain, DataParallelTwoRanksMatchesOneProcessOver50Steps) {
  auto dir = temp_dir("dp_equiv");
  auto one = run(0, kCommon + " --steps 50 --metrics " + (dir / "one.jsonl").string(), dir, "one");
  ASSERT_EQ(one.status, 0) << one.output;
  auto two = run(2, kCommon + " --steps 50 --dp 2 --metrics " + (dir / "two.jsonl").string(), dir, "two");
  ASSERT_EQ(two.status, 0) << two.output;
  auto a = losses(dir / "one.jsonl"), b = losses(dir / "two.jsonl");
  ASSERT_EQ(a.size(), 50u);
  ASSERT_EQ(b.size(), 50u);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], b[i], 1e-4 * std::abs(a[i])) << "step " << i + 1;
  EXPECT_LT(a.back(), a.front() - 1.0) << "the loss should fall over 50 steps";
  fs::remove_all(dir);
}

TEST(DistTrain, OverlappedBucketsMatchBlockingReferenceBitwise) {
  // Two ranks: each element's sum is a + b whatever the bucketing, so the overlapped path (buckets started from
  // the backward hook, small buckets to force many) must give exactly the blocking path's losses; ZeRO-1
  // sharding must not change anything either.
  auto dir = temp_dir("overlap");
  auto ref = run(2, kCommon + " --steps 8 --dp 2 --no-overlap --no-zero --metrics " + (dir / "ref.jsonl").string(),
                 dir, "ref");
  ASSERT_EQ(ref.status, 0) << ref.output;
  auto ov = run(2, kCommon + " --steps 8 --dp 2 --bucket-mb 0.25 --metrics " + (dir / "ov.jsonl").string(), dir, "ov");
  ASSERT_EQ(ov.status, 0) << ov.output;
  auto a = losses(dir / "ref.jsonl"), b = losses(dir / "ov.jsonl");
  ASSERT_EQ(a.size(), 8u);
  ASSERT_EQ(a, b);
  std::ifstream in(dir / "ov.jsonl");
  std::string line;
  std::getline(in, line);
  EXPECT_GT(nlohmann::json::parse(line).at("buckets").get<int>(), 20);
  fs::remove_all(dir);
}

TEST(DistTrain, RankThatDiesEndsTheJobWithAClearError) {
  auto dir = temp_dir("die");
  auto r = run(2, kCommon + " --steps 30 --dp 2 --fault die --fault-rank 1 --fault-step 3 --watchdog 30", dir, "die");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_LT(r.seconds, 90.0) << r.output;
  EXPECT_NE(r.output.find("injected fault 'die'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("exit"), std::string::npos) << r.output;  // mpirun names the rank that exited
  fs::remove_all(dir);
}

TEST(DistTrain, RankThatHangsIsCaughtByTheWatchdog) {
  auto dir = temp_dir("hang");
  auto r = run(2, kCommon + " --steps 30 --dp 2 --fault hang --fault-rank 1 --fault-step 3 --watchdog 15", dir,
               "hang");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_LT(r.seconds, 120.0) << r.output;
  EXPECT_NE(r.output.find("watchdog: no training progress"), std::string::npos) << r.output;
  fs::remove_all(dir);
}

TEST(DistTrain, BadLayoutIsAClearError) {
  auto dir = temp_dir("layout");
  auto r = run(0, kCommon + " --steps 1 --dp 2", dir, "layout");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("needs 2 ranks but the job has 1"), std::string::npos) << r.output;
  fs::remove_all(dir);
}

}  // namespace
