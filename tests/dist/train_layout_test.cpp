// `mpirun -np N trex train ... --dp a --ep b --pp c` on real packed CPT data: the same loss curve as one process (each
// data rank takes its slice of every micro-batch, normalised by the whole micro-batch's target counts), a
// checkpoint written under expert parallelism resumes in one process and continues that run's curve, and
// layouts that do not fit the job or the batch are clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "dist/mpi_run.hpp"
#include "util/atomic_file.hpp"

namespace {

using namespace trex_dist_test;

const std::string kTrex = TREX_BIN_PATH;

RunResult sh(int np, const std::string& args, const fs::path& dir, const std::string& tag) {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  ::setenv("OMP_NUM_THREADS", "1", 1);
  ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
  const fs::path log = dir / (tag + ".log");
  std::string cmd = np > 0 ? mpirun_prefix(np) : std::string();
  cmd += kTrex + " " + args + " > " + log.string() + " 2>&1";
  RunResult r;
  r.status = std::system(cmd.c_str());
  r.output = trex::read_file(log);
  return r;
}

// Same curve: the first step after a common start agrees to fp32 rounding; later steps within 2e-3 relative
// (on this small real batch, 64 tokens at lr 5e-4, reduction-order differences flip near-tied top-k routing
// choices within a few steps; the pure data-parallel control run measures the same size of drift).
void expect_same_curve(const std::vector<double>& ref, size_t ref_first, const std::vector<double>& got) {
  ASSERT_GE(ref.size(), ref_first + got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double a = ref[ref_first + i], rel = std::abs(a - got[i]) / std::abs(a);
    EXPECT_LT(rel, i == 0 ? 1e-6 : 2e-3) << "step " << ref_first + i + 1 << ": " << a << " vs " << got[i];
  }
}

// Same reduction order (pipeline stages split the layers, not the sums): every step within 1e-5 relative.
void expect_close_curve(const std::vector<double>& ref, size_t ref_first, const std::vector<double>& got) {
  ASSERT_GE(ref.size(), ref_first + got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double a = ref[ref_first + i];
    EXPECT_LT(std::abs(a - got[i]) / a, 1e-5) << "step " << ref_first + i + 1 << ": " << a << " vs " << got[i];
  }
}

// A run folder `to` whose latest checkpoint is `from`'s `step` (what --resume continues).
void seed_resume(const fs::path& dir, const std::string& from, const std::string& step, const std::string& to) {
  fs::create_directories(dir / to);
  fs::copy(dir / from / step, dir / to / step, fs::copy_options::recursive);
  trex::write_file_atomic(dir / to / "latest", step + "\n");
}

// The first metrics record of a run: it carries each rank's memory (parameters, gradients, optimizer state).
nlohmann::json first_record(const fs::path& metrics) {
  const std::string log = trex::read_file(metrics);
  return nlohmann::json::parse(log.substr(0, log.find('\n')));
}

// The ranks' memory against one process's: each holds a gradient per parameter, and the optimizer state lives on
// exactly one rank per element (ZeRO-1 over the replicas; under --ep / --pp the experts and stages split too), in
// the CPU branch and the device branch alike. sharded: each rank holds fewer parameters than one process (--ep /
// --pp); else every rank holds them all (--dp) and its own shard of the state only, less than one process's.
void expect_split_memory(const nlohmann::json& one, const nlohmann::json& par, size_t ranks, bool sharded = true) {
  ASSERT_EQ(one.at("memory_per_rank").size(), 1u);
  ASSERT_EQ(par.at("memory_per_rank").size(), ranks);
  const auto& whole = one.at("memory_per_rank")[0];
  int64_t opt = 0;
  for (const auto& r : par.at("memory_per_rank")) {
    if (sharded)
      EXPECT_LT(r.at("param_bytes").get<int64_t>(), whole.at("param_bytes").get<int64_t>()) << r.dump();
    else
      EXPECT_EQ(r.at("param_bytes"), whole.at("param_bytes")) << r.dump();
    EXPECT_EQ(r.at("grad_bytes"), r.at("param_bytes"));
    EXPECT_LT(r.at("optimizer_bytes").get<int64_t>(), whole.at("optimizer_bytes").get<int64_t>()) << r.dump();
    opt += r.at("optimizer_bytes").get<int64_t>();
  }
  EXPECT_EQ(opt, whole.at("optimizer_bytes").get<int64_t>());
}

// The device branch's first record against one process's: its layout, the same gradient norm before any step
// (each replica and each expert counted once), and its ranks' memory split (ZeRO-1).
void expect_sharded_first_step(const nlohmann::json& one, const nlohmann::json& dev, const std::string& layout,
                               size_t ranks) {
  EXPECT_EQ(dev.at("layout"), layout);
  EXPECT_NEAR(dev.at("grad_norm").get<double>(), one.at("grad_norm").get<double>(),
              1e-5 * one.at("grad_norm").get<double>());
  expect_split_memory(one, dev, ranks);
}

class TrainLayout : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir(std::string("train_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    for (const std::string& c :
         {"tokenizer corpus --bytes 60000 --seed 7 -o " + (dir / "corpus.jsonl").string(),
          "tokenizer train -i " + (dir / "corpus.jsonl").string() + " -o " + (dir / "tok.json").string() +
              " --vocab-size 512 --threads 1",
          "data pack --mode cpt -t " + (dir / "tok.json").string() + " -i " + (dir / "corpus.jsonl").string() +
              " -o " + (dir / "cpt").string() + " --threads 1"}) {
      auto r = sh(0, c, dir, "setup");
      ASSERT_EQ(r.status, 0) << c << "\n" << r.output;
    }
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir);
  }
  std::string train(const std::string& out, int steps) const {
    return "train --config tiny --data " + (dir / "cpt").string() + " --mode cpt --seq-len 32 --micro-batch 2 " +
           "--lr 5e-4 --warmup 2 --quiet --steps " + std::to_string(steps) + " --out " + (dir / out).string();
  }
  fs::path dir;
};

TEST_F(TrainLayout, ExpertParallelMatchesOneProcessAndItsCheckpointResumesInOneProcess) {
  auto one = sh(0, train("one", 8), dir, "one");
  ASSERT_EQ(one.status, 0) << one.output;
  auto ep = sh(2, train("ep", 8) + " --ep 2 --save-every 4", dir, "ep");
  ASSERT_EQ(ep.status, 0) << ep.output;
  const auto a = losses(dir / "one" / "metrics.jsonl"), b = losses(dir / "ep" / "metrics.jsonl");
  ASSERT_EQ(a.size(), 8u);
  ASSERT_EQ(b.size(), 8u);
  expect_same_curve(a, 0, b);
  // the step decomposition is in the metrics log
  const std::string log = trex::read_file(dir / "ep" / "metrics.jsonl");
  const auto rec = nlohmann::json::parse(log.substr(0, log.find('\n')));
  for (const char* k : {"compute_seconds", "comm_exposed_seconds", "bubble_seconds"}) EXPECT_TRUE(rec.contains(k)) << k;
  EXPECT_EQ(rec.at("layout"), "dp1 ep2 pp1");
  expect_split_memory(first_record(dir / "one" / "metrics.jsonl"), rec, 2);
  // resume the expert-parallel step-4 checkpoint in one process
  seed_resume(dir, "ep", "step-00000004", "resume");
  auto res = sh(0, train("resume", 8) + " --resume", dir, "resume");
  ASSERT_EQ(res.status, 0) << res.output;
  const auto c = losses(dir / "resume" / "metrics.jsonl");
  ASSERT_EQ(c.size(), 4u);
  expect_same_curve(b, 4, c);  // continues the expert-parallel run's curve
}

// The device branch under data parallelism (--dp 2 with the CPU device step, the branch `--device cuda --dp 2`
// takes: a whole replica per rank, gradients averaged through the host, expert loads summed before the gate-bias
// update, ZeRO-1: each rank updates its shard of the tensors, then the ranks all-gather the weights) against the
// CPU's data-parallel run and one process; its checkpoint (gathered from both ranks' shards) resumes in one process,
// and a one-process checkpoint resumes in it (each rank takes its shard's moments).
TEST_F(TrainLayout, DataParallelDeviceBranchMatchesOneProcess) {
  auto one = sh(0, train("one", 6) + " --save-every 3", dir, "one");
  ASSERT_EQ(one.status, 0) << one.output;
  auto dp = sh(2, train("dp", 6) + " --dp 2", dir, "dp");
  ASSERT_EQ(dp.status, 0) << dp.output;
  auto dev = sh(2, train("dev", 6) + " --dp 2 --test-cpu-device-step --save-every 3", dir, "dev");
  ASSERT_EQ(dev.status, 0) << dev.output;
  const auto a = losses(dir / "one" / "metrics.jsonl"), b = losses(dir / "dp" / "metrics.jsonl"),
             c = losses(dir / "dev" / "metrics.jsonl");
  ASSERT_EQ(c.size(), 6u);
  expect_same_curve(a, 0, c);
  expect_same_curve(b, 0, c);
  const auto first_dev = first_record(dir / "dev" / "metrics.jsonl");
  EXPECT_EQ(first_dev.at("layout"), "dp2 ep1 pp1");
  expect_split_memory(first_record(dir / "one" / "metrics.jsonl"), first_dev, 2, /*sharded=*/false);
  seed_resume(dir, "dev", "step-00000003", "resume");
  auto res = sh(0, train("resume", 6) + " --resume", dir, "resume");
  ASSERT_EQ(res.status, 0) << res.output;
  const auto d = losses(dir / "resume" / "metrics.jsonl");
  ASSERT_EQ(d.size(), 3u);
  expect_same_curve(c, 3, d);
  // the one-process step-3 checkpoint, resumed by the device branch under --dp 2, continues the one-process curve
  seed_resume(dir, "one", "step-00000003", "resume_dp");
  auto res_dp = sh(2, train("resume_dp", 6) + " --dp 2 --test-cpu-device-step --resume", dir, "resume_dp");
  ASSERT_EQ(res_dp.status, 0) << res_dp.output;
  const auto e = losses(dir / "resume_dp" / "metrics.jsonl");
  ASSERT_EQ(e.size(), 3u);
  expect_same_curve(a, 3, e);
}

// The device branch under expert parallelism (--ep 2 with the CPU device step, the branch `--device cuda --ep 2`
// takes: each rank holds its own routed experts, the replica regions' gradients summed over their replicas, the
// norm adding the experts' squares over the expert group), clipped at every step so that a wrong norm changes the
// curve: against one process and the CPU's expert-parallel run. Its checkpoint (gathered from both ranks) resumes
// in one process, and a one-process checkpoint resumes in it (each rank takes its share of the weights and moments).
TEST_F(TrainLayout, ExpertParallelDeviceBranchMatchesOneProcess) {
  const std::string clipped = " --clip 0.05 --save-every 3";
  auto one = sh(0, train("one", 6) + clipped, dir, "one");
  ASSERT_EQ(one.status, 0) << one.output;
  auto ep = sh(2, train("ep", 6) + clipped + " --ep 2", dir, "ep");
  ASSERT_EQ(ep.status, 0) << ep.output;
  auto dev = sh(2, train("dev", 6) + clipped + " --ep 2 --test-cpu-device-step", dir, "dev");
  ASSERT_EQ(dev.status, 0) << dev.output;
  const auto a = losses(dir / "one" / "metrics.jsonl"), b = losses(dir / "ep" / "metrics.jsonl"),
             c = losses(dir / "dev" / "metrics.jsonl");
  ASSERT_EQ(c.size(), 6u);
  expect_same_curve(a, 0, c);
  expect_same_curve(b, 0, c);
  const auto first_one = first_record(dir / "one" / "metrics.jsonl"), first_dev = first_record(dir / "dev" / "metrics.jsonl");
  expect_sharded_first_step(first_one, first_dev, "dp1 ep2 pp1", 2);
  EXPECT_LT(first_dev.at("clip_scale").get<double>(), 1.0);  // clipped: the norm shapes the step
  // the device branch's step-3 checkpoint, resumed in one process, continues its curve
  seed_resume(dir, "dev", "step-00000003", "resume");
  auto res = sh(0, train("resume", 6) + clipped + " --resume", dir, "resume");
  ASSERT_EQ(res.status, 0) << res.output;
  const auto d = losses(dir / "resume" / "metrics.jsonl");
  ASSERT_EQ(d.size(), 3u);
  expect_same_curve(c, 3, d);
  // and the one-process step-3 checkpoint, resumed by the device branch under --ep 2, continues the one-process curve
  seed_resume(dir, "one", "step-00000003", "resume_ep");
  auto res_ep = sh(2, train("resume_ep", 6) + clipped + " --ep 2 --test-cpu-device-step --resume", dir, "resume_ep");
  ASSERT_EQ(res_ep.status, 0) << res_ep.output;
  const auto e = losses(dir / "resume_ep" / "metrics.jsonl");
  ASSERT_EQ(e.size(), 3u);
  expect_same_curve(a, 3, e);
}

TEST_F(TrainLayout, PipelineMatchesOneProcessAndItsCheckpointResumesInOneProcess) {
  // Two stages, 1F1B over the 2 micro-batches of each step (--grad-accum 2), against one process accumulating
  // the same micro-batches; the pipeline's step-4 checkpoint resumes in one process.
  auto one = sh(0, train("one", 8) + " --grad-accum 2", dir, "one");
  ASSERT_EQ(one.status, 0) << one.output;
  auto pp = sh(2, train("pp", 8) + " --grad-accum 2 --pp 2 --save-every 4", dir, "pp");
  ASSERT_EQ(pp.status, 0) << pp.output;
  EXPECT_NE(pp.output.find("pipeline: 2 stages"), std::string::npos) << pp.output;
  const auto a = losses(dir / "one" / "metrics.jsonl"), b = losses(dir / "pp" / "metrics.jsonl");
  ASSERT_EQ(a.size(), 8u);
  ASSERT_EQ(b.size(), 8u);
  expect_close_curve(a, 0, b);
  const std::string log = trex::read_file(dir / "pp" / "metrics.jsonl");
  const auto rec = nlohmann::json::parse(log.substr(0, log.find('\n')));
  EXPECT_EQ(rec.at("layout"), "dp1 ep1 pp2");
  expect_split_memory(first_record(dir / "one" / "metrics.jsonl"), rec, 2);
  EXPECT_GT(rec.at("bubble_seconds").get<double>(), 0.0) << "the first stage waits for the last one's gradients";
  seed_resume(dir, "pp", "step-00000004", "resume");
  auto res = sh(0, train("resume", 8) + " --grad-accum 2 --resume", dir, "resume");
  ASSERT_EQ(res.status, 0) << res.output;
  const auto c = losses(dir / "resume" / "metrics.jsonl");
  ASSERT_EQ(c.size(), 4u);
  expect_close_curve(b, 4, c);
}

// The device branch under pipeline parallelism (--pp 2 with the CPU device step, the branch `--device cuda --pp 2`
// takes: each rank holds its stage's layers, dist::Pipeline runs 1F1B over the device step's stage model, the
// embedding's gradient summed over the first and last stage, the norm counting each replica once over the world),
// clipped at every step so that a wrong norm changes the curve: against one process (the CPU's own --pp 2 is held
// to the same curve by the test above). Its checkpoint (gathered from both stages) resumes in one process, and a
// one-process checkpoint resumes in it.
TEST_F(TrainLayout, PipelineDeviceBranchMatchesOneProcess) {
  const std::string opts = " --grad-accum 2 --clip 0.05 --save-every 3";
  auto one = sh(0, train("one", 6) + opts, dir, "one");
  ASSERT_EQ(one.status, 0) << one.output;
  auto dev = sh(2, train("dev", 6) + opts + " --pp 2 --test-cpu-device-step", dir, "dev");
  ASSERT_EQ(dev.status, 0) << dev.output;
  EXPECT_NE(dev.output.find("pipeline: 2 stages"), std::string::npos) << dev.output;
  const auto a = losses(dir / "one" / "metrics.jsonl"), c = losses(dir / "dev" / "metrics.jsonl");
  ASSERT_EQ(c.size(), 6u);
  expect_close_curve(a, 0, c);
  const auto first_one = first_record(dir / "one" / "metrics.jsonl"), first_dev = first_record(dir / "dev" / "metrics.jsonl");
  expect_sharded_first_step(first_one, first_dev, "dp1 ep1 pp2", 2);
  EXPECT_LT(first_dev.at("clip_scale").get<double>(), 1.0);
  EXPECT_GT(first_dev.at("bubble_seconds").get<double>(), 0.0) << "the first stage waits for the last one's gradients";
  seed_resume(dir, "dev", "step-00000003", "resume");
  auto res = sh(0, train("resume", 6) + opts + " --resume", dir, "resume");
  ASSERT_EQ(res.status, 0) << res.output;
  const auto d = losses(dir / "resume" / "metrics.jsonl");
  ASSERT_EQ(d.size(), 3u);
  expect_close_curve(c, 3, d);
  seed_resume(dir, "one", "step-00000003", "resume_pp");
  auto res_pp = sh(2, train("resume_pp", 6) + opts + " --pp 2 --test-cpu-device-step --resume", dir, "resume_pp");
  ASSERT_EQ(res_pp.status, 0) << res_pp.output;
  const auto e = losses(dir / "resume_pp" / "metrics.jsonl");
  ASSERT_EQ(e.size(), 3u);
  expect_close_curve(a, 3, e);
}

// Both shardings at once on the device branch (--pp 2 --ep 2, 4 ranks: each holds half of its stage's experts,
// and the recomputing stage exchanges the routed rows again when it reruns a forward): one process's curve, first
// gradient norm and smaller ranks.
TEST_F(TrainLayout, PipelineAndExpertParallelDeviceBranchMatchesOneProcess) {
  const std::string opts = " --grad-accum 2 --clip 0.05";
  auto one = sh(0, train("one", 4) + opts, dir, "one");
  ASSERT_EQ(one.status, 0) << one.output;
  auto dev = sh(4, train("dev", 4) + opts + " --pp 2 --ep 2 --test-cpu-device-step", dir, "dev");
  ASSERT_EQ(dev.status, 0) << dev.output;
  const auto a = losses(dir / "one" / "metrics.jsonl"), c = losses(dir / "dev" / "metrics.jsonl");
  ASSERT_EQ(c.size(), 4u);
  expect_close_curve(a, 0, c);
  const auto first_one = first_record(dir / "one" / "metrics.jsonl"), first_dev = first_record(dir / "dev" / "metrics.jsonl");
  expect_sharded_first_step(first_one, first_dev, "dp1 ep2 pp2", 4);
}

TEST_F(TrainLayout, LayoutsThatDoNotFitAreClearErrors) {
  auto r = sh(0, train("bad1", 2) + " --dp 2", dir, "bad1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("needs 2 ranks but the job has 1"), std::string::npos) << r.output;
  r = sh(0, train("bad2", 2) + " --dp 3", dir, "bad2");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--micro-batch 2 is not divisible by dp*ep = 3"), std::string::npos) << r.output;
  r = sh(0, train("bad3", 2) + " --pp 2", dir, "bad3");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("needs 2 ranks but the job has 1"), std::string::npos) << r.output;
}

}  // namespace
