// CodeRunner (a long-lived Python worker per synth thread, solves answered in-process) and the code-answer check.
#include "ordata/code_check.hpp"

#include "ordata/answers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "lp/lp_format.hpp"
#include "lp/solve_report.hpp"
#include "lp/solver.hpp"
#include "ordata/verify.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace trex::ordata {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_left(Clock::time_point deadline) { return std::chrono::duration<double>(deadline - Clock::now()).count(); }

// Waits until fd is ready for `events` or the deadline passes; false on timeout.
bool wait_fd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (ms <= 0) return false;
    struct pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, int(std::min<long long>(ms, 1000)));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return true;  // let the read/write report the error
  }
}

enum class Io { Ok, Closed, Timeout };

Io send_frame(int fd, const std::string& payload, Clock::time_point deadline) {
  std::string data = std::to_string(payload.size()) + "\n" + payload;
  for (size_t off = 0; off < data.size();) {
    ssize_t k = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      off += size_t(k);
      continue;
    }
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!wait_fd(fd, POLLOUT, deadline)) return Io::Timeout;
      continue;
    }
    return Io::Closed;
  }
  return Io::Ok;
}

// Reads one "<length>\n<payload>" frame; `buf` keeps bytes received past it.
Io recv_frame(int fd, std::string& buf, std::string& payload, Clock::time_point deadline) {
  char tmp[65536];
  for (;;) {
    size_t nl = buf.find('\n');
    if (nl != std::string::npos) {
      char* end = nullptr;
      unsigned long long size = std::strtoull(buf.c_str(), &end, 10);
      if (end != buf.c_str() + nl) return Io::Closed;  // not a frame: treat the worker as broken
      if (buf.size() - nl - 1 >= size) {
        payload = buf.substr(nl + 1, size);
        buf.erase(0, nl + 1 + size);
        return Io::Ok;
      }
    }
    ssize_t k = ::recv(fd, tmp, sizeof tmp, MSG_DONTWAIT);
    if (k > 0) {
      buf.append(tmp, size_t(k));
      continue;
    }
    if (k == 0) return Io::Closed;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      if (!wait_fd(fd, POLLIN, deadline)) return Io::Timeout;
      continue;
    }
    return Io::Closed;
  }
}

}  // namespace

CodeRunnerConfig default_code_runner_config() {
  CodeRunnerConfig c;
  fs::path shim;
  if (const char* s = std::getenv("TREX_PYTHON_SHIM"); s && *s)
    shim = s;
  else
    shim = fs::path(TREX_SOURCE_DIR) / "python" / "shim";
  c.worker_script = shim.parent_path() / "synth_code_worker.py";
  c.python_path = {shim, shim.parent_path()};
  return c;
}

void check_code_runner_config(const CodeRunnerConfig& cfg) {
  if (::access(cfg.python.c_str(), X_OK) != 0)
    throw Error("synth: the code answers are checked with " + cfg.python.string() + ", which is not an executable");
  if (!fs::is_regular_file(cfg.worker_script))
    throw Error("synth: the code-answer worker " + cfg.worker_script.string() +
                " is missing (set TREX_PYTHON_SHIM to the python/shim folder of the trex sources)");
}

CodeRunner::CodeRunner(CodeRunnerConfig cfg) : cfg_(std::move(cfg)) {}

CodeRunner::~CodeRunner() { stop(); }

void CodeRunner::start() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw Error(std::string("synth: code-answer worker: socketpair: ") + std::strerror(errno));
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  // Everything the child needs is built before fork(): between fork and exec only async-signal-safe calls.
  std::vector<std::string> args = {cfg_.python.string(), "-B", "-S", cfg_.worker_script.string(), std::to_string(sv[1])};
  for (const auto& p : cfg_.python_path) args.push_back(p.string());
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("PYTHONHASHSEED=", 0) == 0 || kv.rfind("TREX_SOLVE_FD=", 0) == 0) continue;
    env.push_back(kv);
  }
  env.push_back("PYTHONHASHSEED=0");
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    if (devnull >= 0) ::close(devnull);
    throw Error(std::string("synth: code-answer worker: fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    // stdin and stdout on /dev/null (a program's stray output must never reach trex's stdout); stderr kept.
    if (devnull >= 0) {
      ::dup2(devnull, 0);
      ::dup2(devnull, 1);
    }
    ::fcntl(sv[1], F_SETFD, 0);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(sv[1]);
  if (devnull >= 0) ::close(devnull);
  pid_ = pid;
  fd_ = sv[0];
  buf_.clear();
  workdir_.clear();
  ++started_;
  std::string msg;
  Io io = recv_frame(fd_, buf_, msg, Clock::now() + std::chrono::seconds(60));
  Json ready;
  if (io == Io::Ok) ready = Json::parse(msg, nullptr, false);
  if (io != Io::Ok || !ready.is_object() || !ready.value("ready", false)) {
    stop();
    throw Error("synth: the code-answer worker (" + cfg_.python.string() + " " + cfg_.worker_script.string() + ") did not start" +
                (io == Io::Timeout ? " within 60 s" : "; see its error above"));
  }
  workdir_ = ready.value("workdir", "");
}

void CodeRunner::stop() {
  if (pid_ < 0) return;
  if (fd_ >= 0) ::close(fd_);  // EOF: the worker removes its folder and ends
  fd_ = -1;
  int status = 0;
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    gone = r == pid_ || (r < 0 && errno == ECHILD);
    if (!gone) ::usleep(i < 20 ? 1000 : 10000);
  }
  if (!gone) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
  }
  std::error_code ec;
  if (!workdir_.empty()) fs::remove_all(workdir_, ec);  // left behind when it had to be killed
  pid_ = -1;
  workdir_.clear();
  buf_.clear();
}

CodeRun CodeRunner::run(const std::string& code, const std::vector<DataFile>& files, const KnownSolve* known) {
  CodeRun res;
  auto t0 = Clock::now();
  if (pid_ < 0) start();
  auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(cfg_.time_limit_s));
  Json req = Json::object();
  req["code"] = code;
  req["files"] = Json::object();
  for (const auto& f : files) req["files"][f.name] = f.content;
  auto finish = [&](CodeRun::Outcome o, std::string detail) {
    res.outcome = o;
    if (!detail.empty()) res.detail = std::move(detail);
    res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return res;
  };
  auto broken = [&](Io io) {
    bool timeout = io == Io::Timeout;
    if (timeout) ::kill(pid_, SIGKILL);
    stop();
    return finish(timeout ? CodeRun::Timeout : CodeRun::Crashed,
                  timeout ? "time limit exceeded" : "the Python worker ended during the program");
  };
  Io io = send_frame(fd_, req.dump(), deadline);
  if (io != Io::Ok) return broken(io);
  for (;;) {
    std::string msg;
    io = recv_frame(fd_, buf_, msg, deadline);
    if (io != Io::Ok) return broken(io);
    Json m = Json::parse(msg, nullptr, false);
    if (!m.is_object()) return broken(Io::Closed);
    if (m.contains("lp")) {
      ++res.solves;
      bool same = false, reused = false;
      io = send_frame(fd_, solve_request_reply(msg, seconds_left(deadline), known, &same, &reused), deadline);
      res.same_model += same;
      res.reused += reused;
      if (io != Io::Ok) return broken(io);
      continue;
    }
    if (!m.value("done", false)) return broken(Io::Closed);
    res.stdout_text = m.value("stdout", "");
    bool ok = m.value("ok", false);
    return finish(ok ? CodeRun::Ok : CodeRun::Failed, ok ? m.value("stderr", "") : m.value("error", ""));
  }
}

bool layer_model_matches(const lp::Model& layer, const lp::Model& ref, std::vector<int>& ref_var) {
  const size_t n = ref.vars.size();
  if (layer.vars.size() != n || layer.rows.size() != ref.rows.size() || !layer.sos.empty() || !ref.sos.empty()) return false;
  if (layer.objective.sense != ref.objective.sense || layer.objective.constant != ref.objective.constant ||
      !layer.objective.quad.empty() || !ref.objective.quad.empty())
    return false;
  // Columns: C<i> is ref's variable i (the reader numbers variables by first mention, not by name).
  ref_var.assign(n, -1);
  std::vector<char> seen(n, 0);
  auto integral01 = [](const lp::Variable& v) {
    return v.type == lp::VarType::Binary || (v.type == lp::VarType::Integer && v.lb == 0.0 && v.ub == 1.0);
  };
  for (size_t j = 0; j < n; ++j) {
    const auto& name = layer.vars[j].name;
    if (name.size() < 2 || name[0] != 'C') return false;
    char* end = nullptr;
    unsigned long i = std::strtoul(name.c_str() + 1, &end, 10);
    if (*end != '\0' || i >= n || seen[i]) return false;
    seen[i] = 1;
    ref_var[j] = int(i);
    const lp::Variable &a = layer.vars[j], &b = ref.vars[i];
    if (integral01(a) || integral01(b)) {
      if (!(integral01(a) && integral01(b))) return false;
    } else if (a.type != b.type || a.lb != b.lb || a.ub != b.ub) {
      return false;
    }
  }
  // Linear parts compared as maps (ref index -> coefficient); explicit zeros do not count.
  std::vector<double> dense(n, 0.0);
  auto same_terms = [&](const std::vector<lp::Term>& layer_terms, const std::vector<lp::Term>& ref_terms) {
    size_t nonzero = 0;
    for (const auto& t : ref_terms)
      if (t.coef != 0.0) {
        dense[size_t(t.var)] += t.coef;
        ++nonzero;
      }
    bool same = true;
    size_t matched = 0;
    for (const auto& t : layer_terms) {
      if (t.coef == 0.0) continue;
      double& d = dense[size_t(ref_var[size_t(t.var)])];
      if (d != t.coef) same = false;
      else ++matched;
      d = 0.0;
    }
    for (const auto& t : ref_terms) dense[size_t(t.var)] = 0.0;
    return same && matched == nonzero;
  };
  if (!same_terms(layer.objective.terms, ref.objective.terms)) return false;
  for (size_t k = 0; k < ref.rows.size(); ++k) {
    const lp::Row &a = layer.rows[k], &b = ref.rows[k];
    if (a.sense != b.sense || a.rhs != b.rhs || !a.quad.empty() || !b.quad.empty()) return false;
    if (a.sense == lp::RowSense::Range && a.range_upper != b.range_upper) return false;
    if (!same_terms(a.terms, b.terms)) return false;
  }
  return true;
}

std::string solve_request_reply(const std::string& request_json, double wall_left_s, const KnownSolve* known, bool* same_model,
                                bool* reused) {
  if (same_model) *same_model = false;
  if (reused) *reused = false;
  auto read = lp::read_solve_request(request_json);
  if (auto* error = std::get_if<std::string>(&read)) return *error;
  const lp::SolveRequest& req = std::get<lp::SolveRequest>(read);
  const lp::Model& model = req.model;
  std::vector<int> ref_var;
  bool same = known && known->model && known->x && known->x->size() == known->model->vars.size() &&
              layer_model_matches(model, *known->model, ref_var);
  if (same_model) *same_model = same;
  if (same && known->reuse) {
    // What solve() reports for this point: the objective evaluated in the requested model itself.
    lp::SolveResult r;
    r.status = lp::SolveStatus::Optimal;
    r.x.resize(model.vars.size());
    for (size_t j = 0; j < r.x.size(); ++j) r.x[j] = (*known->x)[size_t(ref_var[j])];
    r.objective = model.objective.constant;
    for (const auto& t : model.objective.terms) r.objective += t.coef * r.x[size_t(t.var)];
    if (reused) *reused = true;
    return lp::solve_report_json("model.lp", model, lp::Backend::Cbc, r, req.read_seconds, true).dump();
  }
  return lp::solve_request_reply(req, wall_left_s);
}

bool parse_optimal_value(const std::string& output, double& value) {
  const std::string key = "optimal_value = ";
  std::string num;
  bool found = false;
  for (size_t pos = 0; pos < output.size();) {
    size_t end = output.find('\n', pos);
    if (end == std::string::npos) end = output.size();
    if (output.compare(pos, key.size(), key) == 0) {
      num = output.substr(pos + key.size(), end - pos - key.size());
      found = true;
    }
    pos = end + 1;
  }
  while (!num.empty() && (num.back() == ' ' || num.back() == '\r')) num.pop_back();
  if (!found || num.empty()) return false;
  char* stop = nullptr;
  errno = 0;
  double v = std::strtod(num.c_str(), &stop);
  if (stop != num.c_str() + num.size() || errno != 0 || !std::isfinite(v)) return false;
  value = v;
  return true;
}

std::string check_code_answer(CodeRunner& runner, const std::string& code, const std::vector<DataFile>& files, double objective,
                              CodeRun* out, const KnownSolve* known) {
  CodeRun r = runner.run(code, files, known);
  std::string reason;
  double value = 0.0;
  switch (r.outcome) {
    case CodeRun::Failed: reason = "code_failed"; break;
    case CodeRun::Crashed: reason = "code_crashed"; break;
    case CodeRun::Timeout: reason = "code_timeout"; break;
    case CodeRun::Ok:
      if (!parse_optimal_value(r.stdout_text, value)) reason = "code_no_objective";
      else if (!objectives_match(round_objective(value), objective)) reason = "code_objective_mismatch";
      break;
  }
  if (out) *out = std::move(r);
  return reason;
}

std::string extract_python_block(const std::string& text) { return extract_fenced_block(text, "python"); }

}  // namespace trex::ordata
