// Helpers of the multi-rank tests: run `trex dist-train` under mpirun (root flags and --oversubscribe as in
// MACHINE.md §4, one thread per rank) or as one process, capture its output, read its metrics.
#pragma once
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "temp_dir.hpp"

namespace trex_dist_test {

namespace fs = std::filesystem;

struct RunResult {
  int status = -1;
  double seconds = 0;
  std::string output;
};

inline fs::path temp_dir(const std::string& name) { return trex::testing::fresh_temp_dir("trex_dist_" + name); }

// mpirun with `np` ranks. Ranks that wait yield the core (mpi_yield_when_idle): ctest -j2 runs two multi-rank
// jobs on 2 cores, and busy-polling ranks would starve the ones that compute.
inline std::string mpirun_prefix(int np) {
  return "mpirun -np " + std::to_string(np) + " --oversubscribe --mca mpi_yield_when_idle 1 ";
}

// Runs trex dist-train with `np` ranks (np == 0: without mpirun).
inline RunResult run(int np, const std::string& args, const fs::path& dir, const std::string& tag) {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  ::setenv("OMP_NUM_THREADS", "1", 1);
  ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
  const fs::path log = dir / (tag + ".log");
  std::string cmd = np > 0 ? mpirun_prefix(np) : std::string();
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

inline std::vector<double> losses(const fs::path& metrics) {
  std::vector<double> out;
  std::ifstream in(metrics);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line).at("loss").get<double>());
  return out;
}

}  // namespace trex_dist_test
