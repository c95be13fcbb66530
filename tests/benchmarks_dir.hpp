// The shared benchmark data folder of the tests: $TREX_BENCHMARKS (ctest sets it), else the configured default
// (TREX_TEST_BENCHMARKS, ../shared/benchmarks beside the checkout). Never copied into the repo.
#pragma once
#include <cstdlib>
#include <filesystem>

namespace trex::testing {

inline std::filesystem::path benchmarks_dir() {
  const char* env = std::getenv("TREX_BENCHMARKS");
  return env && *env ? std::filesystem::path(env) : std::filesystem::path(TREX_TEST_BENCHMARKS);
}

}  // namespace trex::testing
