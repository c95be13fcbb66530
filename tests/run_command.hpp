// Runs a shell command for CLI tests and returns its stdout and stderr together, with the exit status.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace trex::testing {

inline std::string run_command(const std::string& cmd, int& rc) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) {
    rc = -1;
    return out;
  }
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  rc = WEXITSTATUS(::pclose(p));
  return out;
}

}  // namespace trex::testing
