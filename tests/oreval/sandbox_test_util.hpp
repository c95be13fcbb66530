// Shared helpers of the sandbox and fork-server tests: a per-test temporary folder and the spec of a Python
// answer (main.py) run in it with HOME/TMPDIR pointing there and fixed limits.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "oreval/sandbox.hpp"
#include "util/atomic_file.hpp"

namespace trex::oreval::testing {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix) {
    path = std::filesystem::temp_directory_path() /
           (prefix + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
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
