// Helpers of the synth CLI tests: run trex, read JSONL files, compare folders byte for byte.
#pragma once
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "util/atomic_file.hpp"
#include "util/jsonl.hpp"

namespace synth_test {

namespace fs = std::filesystem;

inline std::string run(const std::string& cmd, int& rc) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int st = pclose(p);
  rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

inline std::string synth_cmd(const fs::path& out, const std::string& args) {
  return std::string(TREX_BIN_PATH) + " synth --no-progress --out " + out.string() + " " + args;
}

inline fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("trex_synth_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

inline std::vector<trex::Json> read_jsonl(const fs::path& p) {
  std::vector<trex::Json> out;
  trex::JsonlReader r(p);
  while (auto j = r.next()) out.push_back(*j);
  return out;
}

// Every regular file under dir (relative path -> bytes), except timings.jsonl (wall-clock times).
inline std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::string rel = fs::relative(e.path(), dir).string();
    if (rel == "timings.jsonl") continue;
    files[rel] = trex::read_file(e.path());
  }
  return files;
}

}  // namespace synth_test
