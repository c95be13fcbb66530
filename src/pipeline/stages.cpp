// StageRunner: fork/exec of trex subcommands with logs, records and skip-on-rerun.
#include "pipeline/stages.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
#include "util/jsonl.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

namespace trex::pipeline {
namespace fs = std::filesystem;

StageRunner::StageRunner(fs::path trex_bin, fs::path run_dir) : bin_(std::move(trex_bin)), dir_(std::move(run_dir)) {
  fs::create_directories(dir_ / "stages");
  fs::create_directories(dir_ / "logs");
}

std::string StageRunner::fingerprint(const std::vector<fs::path>& paths) {
  std::string acc;
  for (const auto& p : paths) {
    std::vector<fs::path> files;
    if (fs::is_directory(p)) {
      for (auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
    } else if (fs::exists(p)) {
      files.push_back(p);
    } else {
      acc += "missing:" + p.string() + "\n";
    }
    for (const auto& f : files) acc += f.string() + ":" + sha256_hex(read_file(f)) + "\n";
  }
  return sha256_hex(acc);
}

StageProgress read_train_progress(const fs::path& metrics_jsonl, int64_t total_steps) {
  StageProgress p;
  p.total = total_steps;
  std::ifstream in(metrics_jsonl, std::ios::binary);
  if (!in) return p;
  // The last complete line: the trainer appends one per step, and the last may still be half-written.
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff from = std::max<std::streamoff>(0, size - 8192);
  std::string tail(size_t(size - from), '\0');
  in.seekg(from);
  in.read(tail.data(), std::streamsize(tail.size()));
  size_t end = tail.rfind('\n');
  if (end == std::string::npos) return p;
  size_t begin = tail.rfind('\n', end == 0 ? 0 : end - 1);
  begin = (begin == std::string::npos || begin >= end) ? 0 : begin + 1;
  try {
    Json j = Json::parse(tail.substr(begin, end - begin));
    p.done = j.value("step", int64_t(0));
    p.note = fmt::format("loss {:.3f}, {:.0f} tok/s", j.value("lm_loss", 0.0), j.value("tokens_per_s", 0.0));
  } catch (const std::exception&) {
    // A line cut by the 8 KiB window or not yet JSON: no progress this time.
  }
  return p;
}

namespace {

std::string format_progress_line(const std::string& name, const StageProgress& p, double seconds) {
  std::string line = fmt::format("stage {:<12} {}", name, p.done);
  if (p.total > 0) {
    line += fmt::format("/{} ({:.0f} %)", p.total, 100.0 * double(p.done) / double(p.total));
    if (p.done > 0 && p.done < p.total)
      line += fmt::format(", ~{:.0f} s left", seconds * double(p.total - p.done) / double(p.done));
  }
  if (!p.note.empty()) line += ", " + p.note;
  return line;
}

}  // namespace

int StageRunner::wait_showing_progress(pid_t pid, const Stage& st) {
  int status = 0;
  auto t0 = std::chrono::steady_clock::now(), last_log = t0;
  std::optional<ProgressBar> bar;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, st.progress ? WNOHANG : 0);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) throw Error("stage " + st.name + ": waitpid failed: " + std::strerror(errno));
    if (r != 0) continue;  // interrupted by a signal
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto now = std::chrono::steady_clock::now();
    StageProgress p = st.progress();
    if (ProgressBar::on_terminal()) {
      if (!bar && p.total > 0) bar.emplace("stage " + st.name, p.total);
      if (bar) bar->update(p.done, p.note);
    } else if (std::chrono::duration<double>(now - last_log).count() >= progress_log_seconds_) {
      last_log = now;
      log::info("{}", format_progress_line(st.name, p, std::chrono::duration<double>(now - t0).count()));
    }
  }
}

std::optional<StageRecord> StageRunner::reuse(const std::string& name, const std::string& key,
                                              const std::vector<fs::path>& outputs) const {
  fs::path record_file = dir_ / "stages" / (name + ".json");
  if (!fs::exists(record_file)) return std::nullopt;
  try {
    Json old = parse_json_file(record_file);
    bool outputs_ok = std::all_of(outputs.begin(), outputs.end(), [](const fs::path& p) { return fs::exists(p); });
    if (old.value("key", "") != key || old.value("status", "") != "done" || !outputs_ok) return std::nullopt;
    StageRecord rec;
    rec.name = name;
    rec.skipped = true;
    rec.seconds = old.value("seconds", 0.0);
    rec.json = old;
    rec.json["skipped"] = true;
    log::info("stage {:<12} already done ({:.1f} s earlier), skipped", name, rec.seconds);
    return rec;
  } catch (const Error&) {
    return std::nullopt;  // a damaged record means the stage runs again
  }
}

StageRecord StageRunner::record_done(Json j, const std::vector<fs::path>& inputs, const std::vector<fs::path>& outputs,
                                     double seconds) const {
  const std::string name = j["name"];
  for (const auto& o : outputs)
    if (!fs::exists(o)) throw Error("stage " + name + " did not write " + o.string());
  j["status"] = "done";
  j["seconds"] = seconds;
  j["inputs"] = Json::array();
  for (const auto& p : inputs) j["inputs"].push_back(p.string());
  j["outputs"] = Json::array();
  for (const auto& p : outputs) j["outputs"].push_back(p.string());
  write_file_atomic(dir_ / "stages" / (name + ".json"), j.dump(2) + "\n");
  StageRecord rec;
  rec.name = name;
  rec.seconds = seconds;
  rec.json = std::move(j);
  rec.json["skipped"] = false;
  log::info("stage {:<12} done in {:.1f} s", name, seconds);
  return rec;
}

StageRecord StageRunner::run_step(const std::string& name, const std::vector<fs::path>& inputs,
                                  const std::vector<fs::path>& outputs, const std::function<void()>& step) {
  std::string key = sha256_hex("in-process step " + name + "\n" + fingerprint(inputs));
  if (auto done = reuse(name, key, outputs)) return *done;
  auto t0 = std::chrono::steady_clock::now();
  step();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return record_done(Json{{"name", name}, {"key", key}}, inputs, outputs, seconds);
}

StageRecord StageRunner::run(const Stage& st) {
  std::string command;
  for (const auto& a : st.args) command += (command.empty() ? "" : " ") + a;
  std::string key = sha256_hex(command + "\n" + fingerprint(st.inputs));
  fs::path log_file = dir_ / "logs" / (st.name + ".log");
  if (auto done = reuse(st.name, key, st.outputs)) return *done;

  if (!st.fresh_dir.empty()) {
    fs::path rel = fs::absolute(st.fresh_dir).lexically_normal().lexically_relative(fs::absolute(dir_).lexically_normal());
    if (rel.empty() || rel == "." || *rel.begin() == "..")
      throw Error("stage " + st.name + ": refusing to empty " + st.fresh_dir.string() + ", which is outside the run folder");
    fs::remove_all(st.fresh_dir);
  }
  log::info("stage {:<12} running: trex {}", st.name, command);
  auto t0 = std::chrono::steady_clock::now();
  int log_fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw Error(SourceLocation{log_file.string()}, "cannot open stage log");
  std::vector<std::string> argv_s = {bin_.string()};
  argv_s.insert(argv_s.end(), st.args.begin(), st.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  if (pid < 0) throw Error("stage " + st.name + ": fork failed");
  int status = wait_showing_progress(pid, st);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string tail = read_file(log_file);
    if (tail.size() > 1500) tail = tail.substr(tail.size() - 1500);
    throw Error("stage " + st.name + " failed (" +
                (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status)) : "signal " + std::to_string(WTERMSIG(status))) +
                "); log " + log_file.string() + ":\n" + tail);
  }
  return record_done(Json{{"name", st.name}, {"command", "trex " + command}, {"key", key}, {"seed", st.seed},
                          {"log", log_file.string()}},
                     st.inputs, st.outputs, seconds);
}

}  // namespace trex::pipeline
