// Pieces shared by the two ways of starting a sandboxed program (sandbox.cpp: clone + execve;
// forkserver.cpp: fork from a pre-imported Python server): per-run cgroups, the mount list, and the pieces of
// the loop that reads a run's pipes toward its wall-clock deadline.
#pragma once
#include <poll.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

#include "oreval/sandbox.hpp"

namespace trex::oreval::detail {

// Per-run cgroups (v2 unified hierarchy, else v1 pids + memory controllers), removed on destruction.
struct CgroupSet {
  std::vector<std::filesystem::path> dirs;  // one per hierarchy we joined
  std::vector<std::string> names;           // protections obtained ("cgroup-pids", "cgroup-memory")

  CgroupSet() = default;
  CgroupSet(const CgroupSet&) = delete;
  CgroupSet& operator=(const CgroupSet&) = delete;
  ~CgroupSet();
  void create(const std::string& leaf, const SandboxLimits& lim);
  void add(pid_t pid);
  static bool write_file(const std::filesystem::path& p, const std::string& v);
};

// Every mount point except "/" (remounted read-only inside a run's mount namespace).
std::vector<std::string> mount_points();

// A unique cgroup leaf name for one run of this process.
std::string next_cgroup_leaf();

// A run's wall-clock deadline (start + a limit in fractional seconds).
using Deadline = std::chrono::time_point<std::chrono::steady_clock, std::chrono::duration<double>>;

// How long the read loop may poll: until the deadline (at least 1 ms) in slices of at most 200 ms, so the
// deadline is checked often; after the kill, 200 ms slices while the pipes drain.
int poll_slice_ms(Deadline deadline, bool killed);

// Reads what poll() found ready on `p` into `sink`, keeping at most `limit` bytes in it (`truncated`, when
// given, is set if bytes were dropped). At EOF or a read error it closes the descriptor, sets p.fd = -1 and
// returns true (the pipe is finished); otherwise returns false.
bool read_ready(pollfd& p, std::string& sink, std::size_t limit, bool* truncated);

}  // namespace trex::oreval::detail
