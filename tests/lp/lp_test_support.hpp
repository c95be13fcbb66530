// Helpers shared by the LP-format tests: the benchmark folder and the reference LP file lists.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace trex::lp::testing {

inline std::filesystem::path benchmarks_dir() {
  const char* env = std::getenv("TREX_BENCHMARKS");
  return env && *env ? std::filesystem::path(env) : std::filesystem::path(TREX_TEST_BENCHMARKS);
}

// Sorted *.lp files of bench4opt (folder "bench4opt") or bench4opt_feasible; empty if missing.
inline std::vector<std::filesystem::path> reference_lp_files(const std::string& folder) {
  std::vector<std::filesystem::path> out;
  auto dir = benchmarks_dir() / folder / "lp_code";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".lp") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace trex::lp::testing
