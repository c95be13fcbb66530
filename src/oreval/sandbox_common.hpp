// Pieces shared by the two ways of starting a sandboxed program (sandbox.cpp: clone + execve;
// forkserver.cpp: fork from a pre-imported Python server): per-run cgroups and the mount list.
#pragma once
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

}  // namespace trex::oreval::detail
