// Scratch folders for tests: <system temp>/<name>_<pid>, emptied first, so reruns and parallel ctest
// processes never see each other's files.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>

namespace trex::testing {

inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  std::filesystem::path d = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace trex::testing
