// The stage runner behind `trex run`: each stage is one trex subcommand run as a child process (so
// every stage is exactly what its own subcommand does, and can be rerun alone), with its inputs,
// outputs, seed and timing recorded. A stage whose record matches (same command line, same input
// fingerprints, outputs present) is skipped on rerun.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "util/jsonl.hpp"

namespace trex::pipeline {

// How far a running stage has come, read from the files it writes (e.g. a trainer's metrics.jsonl).
struct StageProgress {
  int64_t done = 0, total = 0;  // total 0: unknown
  std::string note;             // e.g. "loss 2.31, 1,620 tok/s"
};

struct Stage {
  std::string name;                           // e.g. "synth", "train-cpt"
  std::vector<std::string> args;              // trex subcommand and its arguments
  std::vector<std::filesystem::path> inputs;  // files/folders whose content the stage depends on
  std::vector<std::filesystem::path> outputs; // files/folders the stage must leave behind
  uint64_t seed = 0;
  // The stage's own folder, emptied before it runs (a trainer refuses a folder that holds a checkpoint, and
  // a changed input must not meet an earlier run's files). Must lie inside the run folder.
  std::filesystem::path fresh_dir = {};
  // Polled while the stage runs (empty: no progress shown).
  std::function<StageProgress()> progress = {};
};

struct StageRecord {
  std::string name;
  bool skipped = false;
  double seconds = 0.0;
  Json json;  // what goes into run.json
};

class StageRunner {
 public:
  // trex_bin: the executable to run stages with; run_dir: the run's folder (records in stages/, logs in logs/).
  StageRunner(std::filesystem::path trex_bin, std::filesystem::path run_dir);

  // Runs (or skips) a stage; throws trex::Error naming the stage and its log on failure.
  StageRecord run(const Stage& stage);

  // An in-process step between stages (e.g. selecting the SFT set), recorded and skipped like a stage: it runs
  // again when its inputs' fingerprint changed or an output is missing.
  StageRecord run_step(const std::string& name, const std::vector<std::filesystem::path>& inputs,
                       const std::vector<std::filesystem::path>& outputs, const std::function<void()>& step);

  // Fingerprint of files/folders (sizes + SHA-256 of contents), for skip decisions.
  static std::string fingerprint(const std::vector<std::filesystem::path>& paths);

  // A running stage with a progress source shows it: a redrawn bar on a terminal, else a log line this often.
  void set_progress_log_seconds(double s) { progress_log_seconds_ = s; }

 private:
  // The earlier record of `name` when its key matches and every output exists.
  std::optional<StageRecord> reuse(const std::string& name, const std::string& key,
                                   const std::vector<std::filesystem::path>& outputs) const;
  // Checks the outputs, writes stages/<name>.json (j: name, key and what else the record holds) and returns it.
  StageRecord record_done(Json j, const std::vector<std::filesystem::path>& inputs,
                          const std::vector<std::filesystem::path>& outputs, double seconds) const;
  int wait_showing_progress(int pid, const Stage& stage);  // the child's wait status
  std::filesystem::path bin_, dir_;
  double progress_log_seconds_ = 30.0;
};

// A trainer's progress: the step, loss and tokens/s of the last complete line of its metrics.jsonl
// (done 0 while the file is missing or holds no complete line).
StageProgress read_train_progress(const std::filesystem::path& metrics_jsonl, int64_t total_steps);

}  // namespace trex::pipeline
