// The stage runner's progress: a trainer's metrics.jsonl read up to its last complete line, and a running
// stage's progress logged while it runs (off a terminal); a stage's own folder emptied before it reruns and
// never one outside the run folder.
#include <gtest/gtest.h>

#include <filesystem>

#include "pipeline/stages.hpp"
#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

namespace fs = std::filesystem;
using trex::pipeline::read_train_progress;
using trex::pipeline::Stage;
using trex::pipeline::StageProgress;
using trex::pipeline::StageRunner;

using trex::testing::fresh_temp_dir;

TEST(StageProgress, TrainProgressIsTheLastCompleteMetricsLine) {
  fs::path d = fresh_temp_dir("trex_stage_progress");
  fs::path m = d / "metrics.jsonl";
  EXPECT_EQ(read_train_progress(m, 300).done, 0);  // no file yet
  EXPECT_EQ(read_train_progress(m, 300).total, 300);
  trex::write_file_atomic(m, "{\"step\":1,\"lm_loss\":3.5,\"tokens_per_s\":1500}\n"
                             "{\"step\":2,\"lm_loss\":3.25,\"tokens_per_s\":1620.4}\n"
                             "{\"step\":3,\"lm_lo");  // the trainer is writing step 3
  StageProgress p = read_train_progress(m, 300);
  EXPECT_EQ(p.done, 2);
  EXPECT_EQ(p.note, "loss 3.250, 1620 tok/s");
  trex::write_file_atomic(m, "not json\n");
  EXPECT_EQ(read_train_progress(m, 300).done, 0);
  fs::remove_all(d);
}

TEST(StageProgress, ARunningStageLogsItsProgress) {
  fs::path d = fresh_temp_dir("trex_stage_runner");
  fs::path counter = d / "counter";
  StageRunner runner("/bin/sh", d / "run");
  runner.set_progress_log_seconds(0.1);
  int polls = 0;
  // each count written to a temp file and renamed: a poll between `>`'s truncation and the write would read ""
  const std::string tmp = (d / "counter.tmp").string(), c = counter.string();
  Stage st{"count",
           {"-c", "echo 1 > " + tmp + " && mv " + tmp + " " + c + "; sleep 0.6; echo 2 > " + tmp + " && mv " + tmp +
                      " " + c + "; sleep 0.6"},
           {}, {counter}, 0};
  st.progress = [&] {
    ++polls;
    StageProgress p;
    p.total = 2;
    if (fs::exists(counter)) p.done = std::stoi(trex::read_file(counter));
    p.note = "counting";
    return p;
  };
  trex::log::init(0);  // the trex logger, on stderr
  testing::internal::CaptureStderr();
  runner.run(st);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_GE(polls, 4);
  EXPECT_NE(err.find("stage count        1/2 (50 %), ~"), std::string::npos) << err;
  EXPECT_NE(err.find("s left, counting"), std::string::npos) << err;
  EXPECT_NE(err.find("stage count        done in"), std::string::npos) << err;
  fs::remove_all(d);
}

TEST(StageProgress, AStageStartsFromAnEmptyFolderInsideTheRunFolderOnly) {
  fs::path d = fresh_temp_dir("trex_stage_fresh");
  fs::path own = d / "run" / "train" / "cpt";
  fs::create_directories(own);
  trex::write_file_atomic(own / "stale", "an earlier run's checkpoint\n");
  StageRunner runner("/bin/sh", d / "run");
  Stage st{"train", {"-c", "test ! -e " + (own / "stale").string() + " && mkdir -p " + own.string() + " && touch " +
                               (own / "latest").string()},
           {}, {own / "latest"}, 0, own};
  EXPECT_NO_THROW(runner.run(st));  // the shell fails if the stale file is still there
  EXPECT_TRUE(fs::exists(own / "latest"));

  fs::path outside = d / "elsewhere";
  fs::create_directories(outside);
  trex::write_file_atomic(outside / "keep", "user data\n");
  Stage bad{"bad", {"-c", "true"}, {}, {}, 0, outside};
  EXPECT_THROW(runner.run(bad), trex::Error);
  Stage up{"up", {"-c", "true"}, {}, {}, 0, d / "run" / ".."};
  EXPECT_THROW(runner.run(up), trex::Error);
  EXPECT_TRUE(fs::exists(outside / "keep"));
  fs::remove_all(d);
}
