// run_sandboxed: namespaces + read-only mounts + cgroups + rlimits + dropped capabilities.
// The child between clone() and execve() only makes raw system calls (no allocation), since the
// parent may be multi-threaded.
#include "oreval/sandbox.hpp"

#include "oreval/sandbox_common.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace trex::oreval {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void child_fail(int err_fd, const char* what) {
  // Only async-signal-safe calls here.
  const char* msg = std::strerror(errno);
  (void)!::write(err_fd, "sandbox: ", 9);
  (void)!::write(err_fd, what, std::strlen(what));
  (void)!::write(err_fd, ": ", 2);
  (void)!::write(err_fd, msg, std::strlen(msg));
  (void)!::write(err_fd, "\n", 1);
  ::_exit(125);
}

struct ChildPlan {
  const char* path;
  char* const* argv;
  char* const* envp;
  const char* workdir;
  int out_fd, err_fd, sync_fd;
  int status_fd;  // namespace mode: the init process reports the program's wait status here
  bool namespaces;  // clone() made PID/net/mount namespaces
  const SandboxLimits* lim;
  // Mount points to remount read-only (collected by the parent, since the child may not allocate).
  const std::vector<std::string>* mounts;
};

void set_limit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit rl{soft, hard};
  ::setrlimit(resource, &rl);
}

void drop_privileges() {
  if (::geteuid() == 0) {
    // Drop every capability for good: bounding set, ambient, then the process sets.
    for (int cap = 0; cap <= 63; ++cap) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
    ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    std::memset(data, 0, sizeof data);
    if (::syscall(SYS_capset, &hdr, data) != 0) child_fail(2, "drop capabilities");
  }
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

// Closes every descriptor from 3 up but the two kept ones, with raw system calls only. The namespace's init
// never execs, so close-on-exec would not close what it inherited: the pipes another thread had just made for
// its own sandbox would stay open until this program ends, and that thread's quick answer would wait for it.
void close_other_descriptors(int keep_a, int keep_b) {
  int lo = keep_a < keep_b ? keep_a : keep_b, hi = keep_a < keep_b ? keep_b : keep_a;
  auto close_span = [](unsigned first, unsigned last) {
    if (first > last) return;
    if (::syscall(SYS_close_range, first, last, 0) == 0) return;
    for (unsigned fd = first; fd <= last && fd < 65536; ++fd) ::close(int(fd));  // kernels before 5.9
  };
  unsigned next = 3;
  for (int keep : {lo, hi}) {
    if (keep < int(next)) continue;
    close_span(next, unsigned(keep) - 1);
    next = unsigned(keep) + 1;
  }
  close_span(next, ~0U);
}

[[noreturn]] void child_main(const ChildPlan& p) {
  ::dup2(p.out_fd, 1);
  ::dup2(p.err_fd, 2);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  close_other_descriptors(p.sync_fd, p.namespaces ? p.status_fd : -1);
  char go;
  if (::read(p.sync_fd, &go, 1) != 1) ::_exit(125);  // parent died or refused
  ::close(p.sync_fd);

  if (p.namespaces) {
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) child_fail(2, "make mounts private");
    if (::mount(p.workdir, p.workdir, nullptr, MS_BIND | MS_REC, nullptr) != 0) child_fail(2, "bind workdir");
    for (const auto& m : *p.mounts) {
      // Remount every other mount read-only; the working directory's own bind stays writable.
      ::mount(nullptr, m.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr);
    }
    if (::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0)
      child_fail(2, "remount / read-only");
    // A fresh /proc for the new PID namespace (read-only), and a private /dev/shm.
    ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, nullptr);
    ::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m");
  }

  const SandboxLimits& L = *p.lim;
  rlim_t cpu = rlim_t(L.cpu_seconds < 1 ? 1 : L.cpu_seconds + 0.999);
  set_limit(RLIMIT_CPU, cpu, cpu + 1);
  set_limit(RLIMIT_AS, L.memory_bytes, L.memory_bytes);
  set_limit(RLIMIT_FSIZE, L.max_file_bytes, L.max_file_bytes);
  set_limit(RLIMIT_NPROC, rlim_t(L.max_processes), rlim_t(L.max_processes));
  set_limit(RLIMIT_CORE, 0, 0);
  set_limit(RLIMIT_NOFILE, 256, 256);

  if (::chdir(p.workdir) != 0) child_fail(2, "chdir to workdir");

  if (p.namespaces) {
    // We are PID 1 of the new namespace: fork the program and reap until it exits. PID 1 ignores
    // default-action signals, so the program must not be PID 1 itself. When we exit, the kernel kills
    // every process left in the namespace.
    pid_t prog = pid_t(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
    if (prog < 0) child_fail(2, "fork program");
    if (prog > 0) {
      drop_privileges();
      for (;;) {
        int st = 0;
        pid_t r = ::waitpid(-1, &st, 0);
        if (r == prog) {
          (void)!::write(p.status_fd, &st, sizeof st);
          ::_exit(0);
        }
        if (r < 0 && errno != EINTR) ::_exit(125);
      }
    }
    ::close(p.status_fd);
  }
  ::setsid();
  drop_privileges();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  ::execve(p.path, p.argv, p.envp);
  child_fail(2, "execve");
}

}  // namespace

SandboxResult run_sandboxed(const SandboxSpec& spec) {
  SandboxResult res;
  auto t0 = std::chrono::steady_clock::now();
  if (spec.argv.empty() || spec.argv[0].empty() || spec.argv[0][0] != '/') {
    res.error = "sandbox: argv[0] must be an absolute path";
    return res;
  }
  std::error_code ec;
  fs::path workdir = fs::canonical(spec.workdir, ec);
  if (ec || !fs::is_directory(workdir)) {
    res.error = "sandbox: working directory does not exist: " + spec.workdir.string();
    return res;
  }

  // Everything the child needs is prepared here, before clone().
  std::vector<std::string> argv_s = spec.argv, env_s = spec.env;
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string wd = workdir.string();
  std::vector<std::string> mounts;
  const bool root = ::geteuid() == 0;
  if (root) mounts = detail::mount_points();

  int out_pipe[2], err_pipe[2], sync_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) { res.error = "sandbox: pipe failed"; return res; }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]); ::close(out_pipe[1]);
    res.error = "sandbox: pipe failed";
    return res;
  }
  if (::pipe2(sync_pipe, O_CLOEXEC) != 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    res.error = "sandbox: pipe failed";
    return res;
  }

  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], sync_pipe[0], sync_pipe[1]}) ::close(fd);
    res.error = "sandbox: pipe failed";
    return res;
  }

  detail::CgroupSet cgroups;
  if (root) cgroups.create(detail::next_cgroup_leaf(), spec.limits);

  ChildPlan plan{argv[0], argv.data(), envp.data(), wd.c_str(), out_pipe[1], err_pipe[1], sync_pipe[0],
                 status_pipe[1], false, &spec.limits, &mounts};
  pid_t pid = -1;
  if (root) {
    plan.namespaces = true;
    pid = pid_t(::syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | SIGCHLD, nullptr, nullptr,
                          nullptr, nullptr));
    if (pid == 0) child_main(plan);
  }
  if (pid < 0) {
    plan.namespaces = false;
    pid = ::fork();
    if (pid == 0) {
      // Unprivileged: a private network through a user namespace where the kernel allows it.
      ::unshare(CLONE_NEWUSER | CLONE_NEWNET);
      child_main(plan);
    }
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(sync_pipe[0]);
  ::close(status_pipe[1]);
  if (pid < 0) {
    ::close(out_pipe[0]); ::close(err_pipe[0]); ::close(sync_pipe[1]); ::close(status_pipe[0]);
    res.error = std::string("sandbox: cannot start child: ") + std::strerror(errno);
    return res;
  }
  res.started = true;
  cgroups.add(pid);
  res.protections = cgroups.names;
  if (plan.namespaces) {
    for (const char* p : {"pid-namespace", "no-network", "read-only-fs", "no-capabilities"}) res.protections.push_back(p);
  }
  for (const char* p : {"rlimit-cpu", "rlimit-memory", "rlimit-fsize", "wall-timeout"}) res.protections.push_back(p);
  (void)!::write(sync_pipe[1], "g", 1);
  ::close(sync_pipe[1]);

  // Read both streams until EOF, enforcing the wall-clock limit.
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&res.stdout_data, &res.stderr_data};
  int open_fds = 2;
  bool killed = false;
  int status = 0;
  bool reaped = false;
  auto deadline = t0 + std::chrono::duration<double>(spec.limits.wall_seconds);
  while (open_fds > 0) {
    auto now = std::chrono::steady_clock::now();
    if (!killed && now >= deadline) {
      res.timed_out = true;
      ::kill(pid, SIGKILL);
      if (!plan.namespaces) ::kill(-pid, SIGKILL);
      killed = true;
    }
    int n = ::poll(fds, 2, detail::poll_slice_ms(deadline, killed));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i)
      if (detail::read_ready(fds[i], *sinks[i], spec.limits.max_output_bytes, &res.output_truncated)) --open_fds;
    // The direct child exited but descendants outside a PID namespace may hold the pipes open.
    if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      if (!plan.namespaces) ::kill(-pid, SIGKILL);
    }
    if (killed && reaped && open_fds > 0 && std::chrono::steady_clock::now() > deadline + std::chrono::seconds(2)) break;
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  if (!reaped) {
    if (::waitpid(pid, &status, 0) == pid) reaped = true;
  }
  if (!plan.namespaces) ::kill(-pid, SIGKILL);
  if (plan.namespaces && reaped && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    // The namespace's init reported the program's own wait status.
    int prog_status = 0;
    if (::read(status_pipe[0], &prog_status, sizeof prog_status) == sizeof prog_status) status = prog_status;
  }
  ::close(status_pipe[0]);
  if (reaped) {
    if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) res.term_signal = WTERMSIG(status);
  }
  if (res.term_signal == SIGXCPU) res.cpu_limit = true;
  if (res.exit_code == 125 && res.stderr_data.rfind("sandbox: ", 0) == 0) {
    res.error = res.stderr_data;
  }
  res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace trex::oreval
