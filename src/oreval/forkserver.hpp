// PythonForkServer: runs sandboxed Python programs by forking a pre-imported Python process
// (python/sandbox_forkserver.py) instead of starting /usr/bin/python3 for each answer, which spares the
// interpreter start and the imports of the gurobipy layer (most of the cost of scoring one answer).
//
// The sandbox is the one run_sandboxed builds (sandbox.hpp): per run a fresh cgroup (processes, memory),
// PID/network/mount namespaces with every mount read-only except the working directory, rlimits (CPU,
// address space, file size, processes), no capabilities, the run's own environment, wall-clock limit
// enforced here. It needs root (namespaces); start() says why it cannot start otherwise, and callers
// fall back to run_sandboxed, the reference path.
//
// Solves: the program gets a socket (fd 3, $TREX_SOLVE_FD) over which the gurobipy layer sends the LP text it
// would otherwise hand to a `trex solve` subprocess; it is read with trex's LP reader and solved here with
// CLP/CBC (as `lp` answers already are), limited to the run's remaining wall time, and the reply is what
// `trex solve --json --values` prints. Identical LP texts are solved once (a cache keyed by SHA-256 of text
// and time limit; time-limited results are not cached): the B4O twins 2k/2k+1 share their models.
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "oreval/sandbox.hpp"

namespace trex::oreval {

class PythonForkServer {
 public:
  // Starts `python server_script` with `env` (the fixed part of every run's environment: PYTHONPATH,
  // PYTHONHASHSEED, LANG, ...), importing the layer, standard modules and `preload` (modules that may be
  // absent, e.g. numpy), and waits until its imports are done. nullptr (and *error) on failure.
  static std::shared_ptr<PythonForkServer> start(const std::filesystem::path& python,
                                                 const std::filesystem::path& server_script,
                                                 const std::vector<std::string>& env,
                                                 const std::vector<std::string>& preload, std::string* error);
  ~PythonForkServer();
  PythonForkServer(const PythonForkServer&) = delete;
  PythonForkServer& operator=(const PythonForkServer&) = delete;

  // True when spec is `python SCRIPT` with the interpreter settings (PYTHON*, LANG, LC_*) this server started
  // with, so that forking it behaves like running the interpreter.
  bool serves(const SandboxSpec& spec) const;
  // Like run_sandboxed(spec). started == false with error set when the server could not take the run.
  SandboxResult run(const SandboxSpec& spec);
  bool alive() const;

  // The reply to one solve request {"lp": TEXT, "time_limit": S (0: none)} (exposed for tests).
  std::string solve_reply(const std::string& request_json, double wall_left_s);
  std::size_t solves_cached() const;

 private:
  PythonForkServer() = default;
  std::filesystem::path python_;
  std::vector<std::string> interpreter_env_;  // sorted PYTHON*/LANG/LC_* entries
  std::vector<std::string> mounts_;
  int sock_ = -1;
  pid_t pid_ = -1;
  mutable std::mutex mu_;
  bool alive_ = false;
  mutable std::mutex cache_mu_;
  std::map<std::string, std::string> solve_cache_;  // sha256(time limit, text) -> reply
  std::size_t cache_hits_ = 0;
};

}  // namespace trex::oreval
