// PythonForkServer (see forkserver.hpp): a Unix SEQPACKET socket to the server; per run one JSON request
// carrying the program's stdout/stderr pipes, a status pipe (the program's wait status, written by the
// namespace's init) and a life pipe (closing it makes the server's monitor kill the run).
#include "oreval/forkserver.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <thread>

#include <nlohmann/json.hpp>

#include "lp/lp_format.hpp"
#include "lp/solve_report.hpp"
#include "lp/solver.hpp"
#include "oreval/sandbox_common.hpp"
#include "util/hash.hpp"
#include "util/jsonl.hpp"

namespace trex::oreval {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> interpreter_settings(const std::vector<std::string>& env) {
  std::vector<std::string> out;
  for (const auto& e : env)
    if (e.rfind("PYTHON", 0) == 0 || e.rfind("LANG=", 0) == 0 || e.rfind("LC_", 0) == 0) out.push_back(e);
  std::sort(out.begin(), out.end());
  return out;
}

// Waits up to timeout_ms for a message; "" on timeout or a closed socket.
std::string receive(int sock, int timeout_ms) {
  struct pollfd p{sock, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return "";
  char buf[4096];
  ssize_t n = ::recv(sock, buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, std::size_t(n)) : std::string();
}

bool send_with_fds(int sock, const std::string& msg, const int (&fds)[5]) {
  struct iovec iov{const_cast<char*>(msg.data()), msg.size()};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof fds)];
  std::memset(control, 0, sizeof control);
  struct msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof control;
  struct cmsghdr* c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof fds);
  std::memcpy(CMSG_DATA(c), fds, sizeof fds);
  return ::sendmsg(sock, &mh, MSG_NOSIGNAL) == ssize_t(msg.size());
}

void close_all(std::initializer_list<int*> fds) {
  for (int* fd : fds)
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
}

}  // namespace

std::shared_ptr<PythonForkServer> PythonForkServer::start(const fs::path& python, const fs::path& server_script,
                                                          const std::vector<std::string>& env,
                                                          const std::vector<std::string>& preload,
                                                          std::string* error) {
  auto fail = [&](std::string why) -> std::shared_ptr<PythonForkServer> {
    if (error) *error = "fork server: " + std::move(why);
    return nullptr;
  };
  if (::geteuid() != 0) return fail("needs root (namespaces)");
  std::error_code ec;
  if (!fs::is_regular_file(server_script, ec)) return fail("no server script at " + server_script.string());
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return fail("socketpair failed");
  // The server's end becomes its fd 3 (dup2 clears close-on-exec); stdin/stdout/stderr are /dev/null.
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> argv_s = {python.string(), server_script.string(), "3"}, env_s = env;
  argv_s.insert(argv_s.end(), preload.begin(), preload.end());
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    return fail(std::string("cannot start ") + python.string() + ": " + std::strerror(rc));
  }
  std::shared_ptr<PythonForkServer> s(new PythonForkServer());
  s->python_ = python;
  s->interpreter_env_ = interpreter_settings(env);
  s->mounts_ = detail::mount_points();
  s->sock_ = sv[0];
  s->pid_ = pid;
  std::string hello = receive(s->sock_, 120'000);  // imports (pandas) can take seconds on a busy machine
  if (hello != "ready") return fail(hello.empty() ? "no answer from the server" : hello);
  s->alive_ = true;
  return s;
}

PythonForkServer::~PythonForkServer() {
  if (sock_ >= 0) ::close(sock_);  // the server ends when its socket closes
  if (pid_ > 0) {
    for (int i = 0; i < 200; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool PythonForkServer::alive() const {
  std::lock_guard<std::mutex> lock(mu_);
  return alive_;
}

bool PythonForkServer::serves(const SandboxSpec& spec) const {
  return spec.argv.size() == 2 && spec.argv[0] == python_.string() && !spec.argv[1].empty() &&
         spec.argv[1][0] != '-' && interpreter_settings(spec.env) == interpreter_env_;
}

std::size_t PythonForkServer::solves_cached() const {
  std::lock_guard<std::mutex> lock(cache_mu_);
  return cache_hits_;
}

std::string PythonForkServer::solve_reply(const std::string& request_json, double wall_left_s) {
  // the request text is the key: the layer writes the same JSON for the same model and time limit
  const std::string key = sha256_hex(request_json);
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = solve_cache_.find(key);
    if (it != solve_cache_.end()) {
      ++cache_hits_;
      return it->second;
    }
  }
  auto read = lp::read_solve_request(request_json);
  if (auto* error = std::get_if<std::string>(&read)) return *error;
  lp::SolveStatus status = lp::SolveStatus::Error;
  std::string reply = lp::solve_request_reply(std::get<lp::SolveRequest>(read), wall_left_s, &status);
  if (status != lp::SolveStatus::TimeLimit && status != lp::SolveStatus::Error) {
    std::lock_guard<std::mutex> lock(cache_mu_);
    solve_cache_.emplace(key, reply);
  }
  return reply;
}

SandboxResult PythonForkServer::run(const SandboxSpec& spec) {
  SandboxResult res;
  auto t0 = std::chrono::steady_clock::now();
  if (!serves(spec)) {
    res.error = "fork server: not a `python SCRIPT` run with this server's interpreter settings";
    return res;
  }
  std::error_code ec;
  fs::path workdir = fs::canonical(spec.workdir, ec);
  if (ec || !fs::is_directory(workdir)) {
    res.error = "sandbox: working directory does not exist: " + spec.workdir.string();
    return res;
  }
  int out[2] = {-1, -1}, err[2] = {-1, -1}, status[2] = {-1, -1}, life[2] = {-1, -1}, solve[2] = {-1, -1};
  bool pipes_ok = ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, solve) == 0;
  for (int* p : {out, err, status, life}) pipes_ok = pipes_ok && ::pipe2(p, O_CLOEXEC) == 0;
  if (!pipes_ok) {
    close_all({&out[0], &out[1], &err[0], &err[1], &status[0], &status[1], &life[0], &life[1], &solve[0], &solve[1]});
    res.error = "sandbox: pipe failed";
    return res;
  }
  detail::CgroupSet cgroups;
  cgroups.create(detail::next_cgroup_leaf(), spec.limits);
  Json req;
  req["argv"] = spec.argv;
  req["workdir"] = workdir.string();
  req["env"] = spec.env;
  req["limits"] = {{"cpu_seconds", spec.limits.cpu_seconds},
                   {"memory_bytes", spec.limits.memory_bytes},
                   {"max_file_bytes", spec.limits.max_file_bytes},
                   {"max_processes", spec.limits.max_processes}};
  Json dirs = Json::array();
  for (const auto& d : cgroups.dirs) dirs.push_back(d.string());
  req["cgroups"] = dirs;
  req["mounts"] = mounts_;
  std::string reply;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!alive_) {
      reply = "server is gone";
    } else if (!send_with_fds(sock_, req.dump(), {out[1], err[1], status[1], life[0], solve[1]})) {
      alive_ = false;
      reply = "cannot reach the server";
    } else {
      reply = receive(sock_, 60'000);
      if (reply.empty()) {
        alive_ = false;
        reply = "no answer from the server";
      }
    }
  }
  close_all({&out[1], &err[1], &status[1], &life[0], &solve[1]});
  if (reply != "ok") {
    close_all({&out[0], &err[0], &status[0], &life[1], &solve[0]});
    res.error = "fork server: " + reply;
    return res;
  }
  res.started = true;
  res.protections = cgroups.names;
  for (const char* p : {"pid-namespace", "no-network", "read-only-fs", "no-capabilities", "rlimit-cpu",
                        "rlimit-memory", "rlimit-fsize", "wall-timeout"})
    res.protections.push_back(p);

  // Read stdout, stderr and the status pipe until EOF on all three, enforcing the wall-clock limit, and answer
  // solve requests ("<length>\n<JSON>") on the solve channel. EOF on the status pipe means the namespace's init
  // and the server's monitor are gone.
  struct pollfd fds[4] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {status[0], POLLIN, 0}, {solve[0], POLLIN, 0}};
  std::string status_bytes, request;
  std::string* sinks[3] = {&res.stdout_data, &res.stderr_data, &status_bytes};
  int open_fds = 3;
  bool killed = false;
  char buf[65536];
  auto deadline = t0 + std::chrono::duration<double>(spec.limits.wall_seconds);
  auto drop_solve_channel = [&] {
    if (fds[3].fd >= 0) ::close(fds[3].fd);
    fds[3].fd = -1;
    solve[0] = -1;
  };
  while (open_fds > 0) {
    auto now = std::chrono::steady_clock::now();
    if (!killed && now >= deadline) {
      res.timed_out = true;
      close_all({&life[1]});  // the monitor kills init, and with it the whole namespace
      drop_solve_channel();
      killed = true;
    }
    if (killed && now > deadline + std::chrono::seconds(5)) break;
    int n = ::poll(fds, 4, detail::poll_slice_ms(deadline, killed));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 3; ++i) {
      std::size_t limit = i == 2 ? sizeof(int) : spec.limits.max_output_bytes;
      if (detail::read_ready(fds[i], *sinks[i], limit, i < 2 ? &res.output_truncated : nullptr)) --open_fds;
    }
    if (fds[3].fd >= 0 && (fds[3].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t r = ::read(fds[3].fd, buf, sizeof buf);
      if (r <= 0) {
        drop_solve_channel();
        continue;
      }
      request.append(buf, std::size_t(r));
      std::size_t nl = request.find('\n');
      if (nl == std::string::npos && request.size() <= 20) continue;
      std::size_t size = 0;
      bool header_ok = nl != std::string::npos && nl > 0 && nl <= 20;
      for (std::size_t k = 0; header_ok && k < nl; ++k) {
        header_ok = std::isdigit(static_cast<unsigned char>(request[k])) != 0;
        if (header_ok) size = size * 10 + std::size_t(request[k] - '0');
      }
      if (!header_ok || size > spec.limits.max_file_bytes) {  // as a file, the LP would hit RLIMIT_FSIZE too
        drop_solve_channel();
        continue;
      }
      if (request.size() < nl + 1 + size) continue;
      double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
      std::string reply = solve_reply(request.substr(nl + 1, size), left);
      request.erase(0, nl + 1 + size);
      reply = std::to_string(reply.size()) + "\n" + reply;
      // The program waits for the reply; a blocking write is fine, and a program that stops reading only
      // blocks itself until the wall-clock limit.
      for (std::size_t off = 0; off < reply.size();) {
        struct pollfd w{fds[3].fd, POLLOUT, 0};
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (ms <= 0 || ::poll(&w, 1, int(std::min<long long>(ms, 200))) < 0) break;
        if (!(w.revents & POLLOUT)) continue;
        ssize_t k = ::send(fds[3].fd, reply.data() + off, reply.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k <= 0 && errno != EAGAIN) break;
        if (k > 0) off += std::size_t(k);
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  close_all({&life[1]});
  if (status_bytes.size() == sizeof(int)) {
    int st = 0;
    std::memcpy(&st, status_bytes.data(), sizeof st);
    if (WIFEXITED(st)) res.exit_code = WEXITSTATUS(st);
    if (WIFSIGNALED(st)) res.term_signal = WTERMSIG(st);
  } else if (res.stderr_data.rfind("sandbox: ", 0) == 0) {
    res.exit_code = 125;
    res.error = res.stderr_data;
  } else {
    res.term_signal = SIGKILL;  // killed with its namespace (wall-clock limit, or the OOM killer took init)
  }
  if (res.term_signal == SIGXCPU) res.cpu_limit = true;
  res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace trex::oreval
