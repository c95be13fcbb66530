// StageRunner: fork/exec of trex subcommands with logs, records and skip-on-rerun.
#include "pipeline/stages.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
#include "util/log.hpp"

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

StageRecord StageRunner::run(const Stage& st) {
  StageRecord rec;
  rec.name = st.name;
  std::string command;
  for (const auto& a : st.args) command += (command.empty() ? "" : " ") + a;
  std::string key = sha256_hex(command + "\n" + fingerprint(st.inputs));
  fs::path record_file = dir_ / "stages" / (st.name + ".json");
  fs::path log_file = dir_ / "logs" / (st.name + ".log");

  if (fs::exists(record_file)) {
    try {
      Json old = parse_json_file(record_file);
      bool outputs_ok = std::all_of(st.outputs.begin(), st.outputs.end(), [](const fs::path& p) { return fs::exists(p); });
      if (old.value("key", "") == key && old.value("status", "") == "done" && outputs_ok) {
        rec.skipped = true;
        rec.seconds = old.value("seconds", 0.0);
        rec.json = old;
        rec.json["skipped"] = true;
        log::info("stage {:<12} already done ({:.1f} s earlier), skipped", st.name, rec.seconds);
        return rec;
      }
    } catch (const Error&) {
      // A damaged record means the stage runs again.
    }
  }

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
  int status = 0;
  ::waitpid(pid, &status, 0);
  rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string tail = read_file(log_file);
    if (tail.size() > 1500) tail = tail.substr(tail.size() - 1500);
    throw Error("stage " + st.name + " failed (" +
                (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status)) : "signal " + std::to_string(WTERMSIG(status))) +
                "); log " + log_file.string() + ":\n" + tail);
  }
  for (const auto& o : st.outputs)
    if (!fs::exists(o)) throw Error("stage " + st.name + " did not write " + o.string());
  Json j;
  j["name"] = st.name;
  j["command"] = "trex " + command;
  j["status"] = "done";
  j["key"] = key;
  j["seed"] = st.seed;
  j["seconds"] = rec.seconds;
  j["inputs"] = Json::array();
  for (const auto& p : st.inputs) j["inputs"].push_back(p.string());
  j["outputs"] = Json::array();
  for (const auto& p : st.outputs) j["outputs"].push_back(p.string());
  j["log"] = log_file.string();
  write_file_atomic(record_file, j.dump(2) + "\n");
  rec.json = j;
  rec.json["skipped"] = false;
  log::info("stage {:<12} done in {:.1f} s", st.name, rec.seconds);
  return rec;
}

}  // namespace trex::pipeline
