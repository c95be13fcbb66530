// CgroupSet, mount_points and the read-loop pieces (see sandbox_common.hpp).
#include "oreval/sandbox_common.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace trex::oreval::detail {
namespace fs = std::filesystem;

bool CgroupSet::write_file(const fs::path& p, const std::string& v) {
  std::ofstream f(p);
  if (!f) return false;
  f << v;
  f.flush();
  return bool(f);
}

void CgroupSet::create(const std::string& leaf, const SandboxLimits& lim) {
  fs::path v2 = "/sys/fs/cgroup";
  std::error_code ec;
  if (fs::exists(v2 / "cgroup.controllers", ec)) {
    fs::path d = v2 / leaf;
    if (fs::create_directory(d, ec)) {
      bool p = write_file(d / "pids.max", std::to_string(lim.max_processes));
      bool m = write_file(d / "memory.max", std::to_string(lim.memory_bytes));
      dirs.push_back(d);
      if (p) names.push_back("cgroup-pids");
      if (m) names.push_back("cgroup-memory");
    }
    return;
  }
  fs::path pids = "/sys/fs/cgroup/pids", mem = "/sys/fs/cgroup/memory";
  if (fs::exists(pids / "cgroup.procs", ec) && fs::create_directory(pids / leaf, ec)) {
    dirs.push_back(pids / leaf);
    if (write_file(pids / leaf / "pids.max", std::to_string(lim.max_processes))) names.push_back("cgroup-pids");
  }
  if (fs::exists(mem / "cgroup.procs", ec) && fs::create_directory(mem / leaf, ec)) {
    dirs.push_back(mem / leaf);
    if (write_file(mem / leaf / "memory.limit_in_bytes", std::to_string(lim.memory_bytes)))
      names.push_back("cgroup-memory");
  }
}

void CgroupSet::add(pid_t pid) {
  for (auto& d : dirs) write_file(d / "cgroup.procs", std::to_string(pid));
}

CgroupSet::~CgroupSet() {
  // The run's processes are gone by now (PID namespace) or killed; rmdir may need a moment.
  for (auto& d : dirs) {
    for (int i = 0; i < 100 && ::rmdir(d.c_str()) != 0 && errno == EBUSY; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::vector<std::string> mount_points() {
  std::vector<std::string> out;
  std::ifstream f("/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ss(line);
    std::string id, parent, devno, root, mp;
    ss >> id >> parent >> devno >> root >> mp;
    if (!mp.empty() && mp != "/") out.push_back(mp);
  }
  return out;
}

std::string next_cgroup_leaf() {
  static std::atomic<unsigned> counter{0};
  return "trex-sandbox-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

int poll_slice_ms(Deadline deadline, bool killed) {
  if (killed) return 200;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return int(std::clamp<long long>(left.count(), 1, 200));
}

bool read_ready(pollfd& p, std::string& sink, std::size_t limit, bool* truncated) {
  if (p.fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) return false;
  char buf[65536];
  ssize_t r = ::read(p.fd, buf, sizeof buf);
  if (r <= 0) {
    ::close(p.fd);
    p.fd = -1;
    return true;
  }
  std::size_t room = limit > sink.size() ? limit - sink.size() : 0;
  if (truncated && std::size_t(r) > room) *truncated = true;
  sink.append(buf, std::min<std::size_t>(std::size_t(r), room));
  return false;
}

}  // namespace trex::oreval::detail
