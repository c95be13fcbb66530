// Shared helpers of the sandbox and fork-server tests: a per-test temporary folder and the spec of a Python
// answer (main.py) run in it with HOME/TMPDIR pointing there and fixed limits.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "oreval/sandbox.hpp"
#include "temp_dir.hpp"
#include "util/atomic_file.hpp"

namespace trex::oreval::testing {

// A scoped temporary folder per call (a counter tells apart the several one test may make).
struct TempDir : trex::testing::ScopedTempDir {
  explicit TempDir(const std::string& prefix) : ScopedTempDir(prefix + std::to_string(counter++)) {}
  static inline int counter = 0;
};

inline SandboxSpec python_spec(const TempDir& dir, const std::string& code, std::vector<std::string> env,
                               double wall, double cpu) {
  trex::write_file_atomic(dir.path / "main.py", code);
  SandboxSpec s;
  s.argv = {"/usr/bin/python3", "main.py"};
  s.workdir = dir.path;
  s.env = std::move(env);
  s.env.push_back("HOME=" + dir.path.string());
  s.env.push_back("TMPDIR=" + dir.path.string());
  s.limits.wall_seconds = wall;
  s.limits.cpu_seconds = cpu;
  s.limits.memory_bytes = std::size_t(1) << 30;
  return s;
}

}  // namespace trex::oreval::testing
