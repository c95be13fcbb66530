// Sandboxed execution of untrusted code (model answers): a child process with CPU, wall-clock,
// memory, process-count, file-size and output limits, no network, and a file system that is
// read-only except for its own working directory.
//
// As root (CI, the dev machines) the child gets new PID, network and mount namespaces, every mount
// remounted read-only except the working directory, cgroup limits on processes and memory, and no
// capabilities. Without root it falls back to rlimits (incl. RLIMIT_NPROC) and, where the kernel
// allows unprivileged user namespaces, a private network namespace. SandboxResult::protections says
// which protections were active, so a caller can refuse to run with fewer than it needs.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace trex::oreval {

struct SandboxLimits {
  double wall_seconds = 360.0;
  double cpu_seconds = 360.0;
  std::size_t memory_bytes = std::size_t(4) << 30;  // address space per process and cgroup total
  int max_processes = 64;
  std::size_t max_output_bytes = std::size_t(4) << 20;  // per stream; the rest is drained and dropped
  std::size_t max_file_bytes = std::size_t(256) << 20;
};

struct SandboxSpec {
  std::vector<std::string> argv;          // argv[0] must be an absolute path
  std::filesystem::path workdir;          // must exist; the only writable place; the child's cwd
  std::vector<std::string> env;           // full environment ("KEY=value"); nothing is inherited
  SandboxLimits limits;
};

struct SandboxResult {
  bool started = false;     // false: the child could not be set up (see error)
  int exit_code = -1;       // valid when exited normally
  int term_signal = 0;      // signal that killed the child, 0 if none
  bool timed_out = false;   // wall-clock limit hit (child killed)
  bool cpu_limit = false;   // killed by SIGXCPU / SIGKILL after the CPU limit
  bool output_truncated = false;
  std::string stdout_data, stderr_data;
  double wall_seconds = 0.0;
  std::vector<std::string> protections;  // e.g. "pid-namespace", "no-network", "read-only-fs", "cgroup-pids"
  std::string error;
  bool ok() const { return started && !timed_out && term_signal == 0 && exit_code == 0; }
};

SandboxResult run_sandboxed(const SandboxSpec& spec);

}  // namespace trex::oreval
