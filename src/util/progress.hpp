// A one-line progress bar on stderr ("\r" redraws), silent unless both stdout and stderr are terminals
// (CI, pipes, redirected output).
// Redraws at most ~10 times a second so a hot loop can call update() freely.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace trex {

class ProgressBar {
 public:
  ProgressBar(std::string label, int64_t total, bool enabled = true);
  ~ProgressBar();
  void update(int64_t done, const std::string& suffix = "");  // suffix: e.g. "acc 41.2%"
  void advance(int64_t n = 1, const std::string& suffix = "") { update(done_ + n, suffix); }
  void finish();
  bool active() const { return active_; }
  static bool on_terminal();

 private:
  void draw(const std::string& suffix);
  std::string label_;
  int64_t total_, done_ = 0;
  bool active_, finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace trex
