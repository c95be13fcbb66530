// Helpers shared by the LP-format tests: the benchmark folder and the reference LP file lists.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "benchmarks_dir.hpp"

namespace trex::lp::testing {

using trex::testing::benchmarks_dir;

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
