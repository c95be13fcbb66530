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

// A fresh_temp_dir that is removed again when the test is over.
struct ScopedTempDir {
  std::filesystem::path path;
  explicit ScopedTempDir(const std::string& name) : path(fresh_temp_dir(name)) {}
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
};

}  // namespace trex::testing
