// Pipeline check of the code answers: every gurobipy-style program `trex synth` exports is run through
// trex's gurobipy-compatible layer (python/trex_gurobipy) and must print the verified objective.
//
// CodeRunner keeps one long-lived Python worker (python/synth_code_worker.py, /usr/bin/python3) that runs
// many programs, each with fresh globals in a fresh folder holding its data files; the layer's
// Model.optimize() hands the LP text back over the worker's channel and it is read with trex's LP reader
// and solved with CBC here, in this process (no process per program or per solve). One runner per synth
// thread; a program that overruns the time limit gets its worker killed (a new one starts on the next run).
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "lp/model.hpp"
#include "ordata/data_files.hpp"

namespace trex::ordata {

struct CodeRunnerConfig {
  std::filesystem::path python = "/usr/bin/python3";
  std::filesystem::path worker_script;                // python/synth_code_worker.py
  std::vector<std::filesystem::path> python_path;     // python/shim (gurobipy -> the layer), python/
  double time_limit_s = 60.0;                         // wall-clock limit of one program, solves included
};

// $TREX_PYTHON_SHIM (as `trex eval`), else <source>/python/shim; the worker script next to it.
CodeRunnerConfig default_code_runner_config();

// Throws trex::Error when the interpreter or the worker script is missing (checked before a run writes).
void check_code_runner_config(const CodeRunnerConfig& cfg);

// The verified solve of the instance. A solve request whose model is that model but for names
// (layer_model_matches) is answered, when `reuse`, with this solution instead of solving it again with CBC
// (a cache hit: the verification solved exactly this model with the same solver); any other model, or every
// model when !reuse (the reference path), is solved. Either way the match is reported (CodeRun::same_model).
struct KnownSolve {
  const lp::Model* model = nullptr;
  const std::vector<double>* x = nullptr;  // CBC's optimal point of `model`
  bool reuse = true;
};

// True when `layer` (an LP written by the gurobipy layer, canonical column names C<i>, read back) is `ref`
// but for names: column C<i> is ref's variable i with the same type (binary = integer in [0, 1]) and bounds,
// the same objective sense, coefficients and constant, and row k is ref's row k with the same sense,
// right-hand side (range) and coefficients, every double equal. Fills ref_var[j] = ref index of layer var j.
bool layer_model_matches(const lp::Model& layer, const lp::Model& ref, std::vector<int>& ref_var);

struct CodeRun {
  enum Outcome { Ok, Failed, Crashed, Timeout } outcome = Failed;
  std::string stdout_text;
  std::string detail;  // traceback / exit status / why the worker died
  int solves = 0;       // Model.optimize() calls answered
  int same_model = 0;   // ... of them whose model is the KnownSolve's model (names aside)
  int reused = 0;       // ... answered with the KnownSolve's solution (no CBC run)
  double seconds = 0.0;
};

class CodeRunner {
 public:
  explicit CodeRunner(CodeRunnerConfig cfg);
  ~CodeRunner();
  CodeRunner(const CodeRunner&) = delete;
  CodeRunner& operator=(const CodeRunner&) = delete;

  // Runs `code` like `python3 answer.py` in a folder holding `files`. Throws trex::Error only when the
  // worker cannot be started at all (an environment problem, not the program's).
  CodeRun run(const std::string& code, const std::vector<DataFile>& files, const KnownSolve* known = nullptr);
  int workers_started() const { return started_; }

 private:
  void start();
  void stop();
  CodeRunnerConfig cfg_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buf_;                // bytes received past the last frame
  std::filesystem::path workdir_;  // the worker's temporary folder (removed here when it had to be killed)
  int started_ = 0;
};

// The reply to one solve request {"lp": TEXT, "time_limit": S (0: none)}: what `trex solve --json --values`
// prints, solved with CBC within min(S, wall_left_s), or taken from `known` (see KnownSolve).
std::string solve_request_reply(const std::string& request_json, double wall_left_s, const KnownSolve* known = nullptr,
                                bool* same_model = nullptr, bool* reused = nullptr);

// The value of the last "optimal_value = <number>" line of a program's output; false when there is none
// (or it is not a number, e.g. "ERROR").
bool parse_optimal_value(const std::string& output, double& value);

// Runs a code answer and compares what it prints with the verified objective (objectives_match, the
// tolerance of the LP check). Returns "" when it reproduces it, else the rejection reason: code_failed
// (exception or non-zero exit), code_crashed (the worker died), code_timeout, code_no_objective (no
// optimal_value line, or "ERROR"), code_objective_mismatch.
std::string check_code_answer(CodeRunner& runner, const std::string& code, const std::vector<DataFile>& files, double objective,
                              CodeRun* run = nullptr, const KnownSolve* known = nullptr);

// Longest ```python fenced block of a text (empty when none).
std::string extract_python_block(const std::string& text);

}  // namespace trex::ordata
