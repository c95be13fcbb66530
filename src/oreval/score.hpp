// Scoring one response exactly as the report's harness does (OR_BENCHMARKS.md §4–§6): code answers run
// in the sandbox against the gurobipy-compatible layer (python/shim) or a real gurobipy; `lp` answers
// go through trex's LP reader and CBC; ORGEval answers are compared with `check_equivalence`.
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "oreval/benchmarks.hpp"
#include "oreval/forkserver.hpp"
#include "oreval/prompts.hpp"
#include "oreval/sandbox.hpp"

namespace trex::oreval {

struct ExecConfig {
  std::filesystem::path python = "/usr/bin/python3";
  std::filesystem::path shim_dir;   // holds the `gurobipy` shim package; empty with executor "gurobipy"
  std::filesystem::path trex_bin;   // the trex executable the shim solves with
  std::filesystem::path work_root;  // per-attempt working folders are made (and removed) below it
  std::string executor = "trex";    // "trex" (our layer) or "gurobipy" (a real gurobipy on the system)
  double solve_timeout_s = 360.0;   // solver targets: wall limit of one program run
  double orgeval_timeout_s = 180.0; // ORGEval: limit of one whole attempt
  double lp_time_limit_s = 60.0;    // `lp` answers: CBC time limit
  std::size_t memory_bytes = std::size_t(4) << 30;
  bool keep_workdirs = false;
  // ORGEval's missing-lb insertion (§5.2) rewrites model answers; --oracle turns it off so that the
  // reference programs are scored as written (with it, every `model.addVars(...)` without lb= breaks).
  bool orgeval_lb_quirk = true;
  // The report's solver wrapper takes `model`/`m` only if hasattr(obj, "ObjVal"): with a real gurobipy that is
  // False until the model is solved, so an answer that never calls optimize() is MODEL_NOT_FOUND there (measured
  // with T-Rex's harness, bench/trex_harness.bench.sh). --oracle turns it off: the B4O reference programs build
  // their models without solving them, and the oracle solves them (optimize() when still LOADED).
  bool solver_objval_quirk = true;
  // Python answers are forked from this pre-imported server when set (start_forkserver); else, or when it
  // cannot take a run, each answer starts /usr/bin/python3 through run_sandboxed (the reference path).
  bool use_forkserver = true;  // run_eval starts them (root, executor trex) unless this is false
  std::shared_ptr<PythonForkServer> forkserver;             // the layer and standard modules pre-imported
  std::shared_ptr<PythonForkServer> forkserver_scientific;  // also numpy and pandas (answers naming them)
  std::filesystem::path forkserver_script;  // python/sandbox_forkserver.py
};

// Starts a fork server for cfg's trex executor (root only) pre-importing `preload` besides the layer;
// nullptr and *why when it does not start.
std::shared_ptr<PythonForkServer> start_forkserver(const ExecConfig& cfg, const std::vector<std::string>& preload,
                                                   std::string* why);

// Defaults from the environment: TREX_PYTHON_SHIM / <source>/python/shim, TREX_BIN / this executable.
ExecConfig default_exec_config();

struct Outcome {
  bool success = false;
  std::string kind = "exec_error";  // "success" or a failure kind (see docs/eval.md)
  bool code_pass = false;           // solver targets: an OPTIMAL prediction exists; ORGEval: the LP was written
  std::optional<double> predicted;
  std::string status;               // solver status name when known (OPTIMAL, INFEASIBLE, ...)
  std::string detail;               // short diagnostic (exception text, failed check)
  std::string api;                  // code answers: gurobipy / coptpy / pulp, or the unsupported module (extract.hpp)
  double seconds = 0.0;
  int verdict_checks = 0;           // LP answers: re-solves that checked CBC's infeasible / unbounded verdict
  bool verdict_overruled = false;   // ... and whether they overruled it (lp/solver.hpp, confirm_verdicts)
};

Outcome score_response(const Benchmark& bench, const BenchItem& item, AnswerStyle style, const std::string& response,
                       const ExecConfig& cfg);

// The report's code rewriting, exposed for tests.
std::string rewrite_solver_code(std::string code, const std::string& data_json_path, bool gurobipy_import = true);
std::string rewrite_orgeval_code(std::string code, const std::string& data_json_path, const std::string& target_lp,
                                 bool lb_quirk = true);

// Objective comparison: the report's rule (absolute 1e-6, inclusive), and the relative rule the other
// benchmarks' authors use, |pred − gold| ≤ max(1e-6, rel_tol·|gold|) (never stricter than the absolute rule).
bool objective_matches(double predicted, double gold);
bool objective_matches_relative(double predicted, double gold, double rel_tol = 1e-4);

// Maps a Python exception class name to a failure kind (NameError -> name_error, ...).
std::string failure_kind_for_exception(const std::string& type_name, const std::string& message);

}  // namespace trex::oreval
