// Multi-rank runs of `trex dist-train` under mpirun (root flags and --oversubscribe as in MACHINE.md §4):
// overlapped vs blocking all-reduce, and faults (a rank that dies, a rank that hangs) ending the job with a
// clear error in bounded time with the last complete checkpoint intact. Layout equivalence: layout_equiv_test.cpp.
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

#include "dist/mpi_run.hpp"

namespace fs = std::filesystem;

namespace {

using namespace trex_dist_test;

const std::string kCommon = " --config tiny --seq-len 32 --global-batch 2 --seed 7";

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

TEST(DistTrain, ExpertExchangeOverlappedWithSharedExpertMatchesBlockingBitwise) {
  // The overlap only moves the waits: nonblocking dispatch/combine with the shared expert in between must give
  // exactly the losses of exchanges completed at once (--no-overlap; 2 ranks: the all-reduce is exact too).
  auto dir = temp_dir("ep_overlap");
  auto ref = run(2, kCommon + " --steps 6 --ep 2 --no-overlap --metrics " + (dir / "ref.jsonl").string(), dir, "ref");
  ASSERT_EQ(ref.status, 0) << ref.output;
  auto ov = run(2, kCommon + " --steps 6 --ep 2 --metrics " + (dir / "ov.jsonl").string(), dir, "ov");
  ASSERT_EQ(ov.status, 0) << ov.output;
  auto a = losses(dir / "ref.jsonl"), b = losses(dir / "ov.jsonl");
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(a, b);
  fs::remove_all(dir);
}

TEST(DistTrain, RankThatDiesEndsTheJobWithAClearErrorAndKeepsTheLastCheckpoint) {
  // Expert parallel (a dead peer blocks the others inside the token exchange), checkpoints every 2 steps: rank 1
  // dies at step 5, so step-00000004 is the last complete checkpoint and must still load and resume.
  auto dir = temp_dir("die");
  auto r = run(2, kCommon + " --steps 30 --ep 2 --save-every 2 --out " + (dir / "out").string() +
                      " --fault die --fault-rank 1 --fault-step 5 --watchdog 30",
               dir, "die");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_LT(r.seconds, 90.0) << r.output;
  EXPECT_NE(r.output.find("injected fault 'die'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("exit"), std::string::npos) << r.output;  // mpirun names the rank that exited
  std::ifstream latest(dir / "out" / "latest");
  std::string name;
  latest >> name;
  EXPECT_EQ(name, "step-00000004") << r.output;
  auto resumed = run(0, kCommon + " --steps 5 --resume --out " + (dir / "out").string() + " --metrics " +
                            (dir / "resumed.jsonl").string(),
                     dir, "resumed");
  EXPECT_EQ(resumed.status, 0) << resumed.output;
  EXPECT_EQ(losses(dir / "resumed.jsonl").size(), 1u) << resumed.output;  // step 5 only
  fs::remove_all(dir);
}

TEST(DistTrain, PipelineRankThatDiesEndsTheJobWithAClearErrorAndKeepsTheLastCheckpoint) {
  // Two pipeline stages: when the last stage dies at step 5 the first blocks receiving its gradients; the job
  // must still end in bounded time, naming the rank, with step-00000004 intact.
  auto dir = temp_dir("pp_die");
  auto r = run(2, kCommon + " --steps 30 --pp 2 --micro-batches 2 --save-every 2 --out " + (dir / "out").string() +
                      " --fault die --fault-rank 1 --fault-step 5 --watchdog 30",
               dir, "pp_die");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_LT(r.seconds, 90.0) << r.output;
  EXPECT_NE(r.output.find("injected fault 'die'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("exit"), std::string::npos) << r.output;
  std::ifstream latest(dir / "out" / "latest");
  std::string name;
  latest >> name;
  EXPECT_EQ(name, "step-00000004") << r.output;
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
