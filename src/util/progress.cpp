// ProgressBar drawing.
#include "util/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <fmt/format.h>

namespace trex {

bool ProgressBar::on_terminal() { return ::isatty(STDERR_FILENO) == 1 && ::isatty(STDOUT_FILENO) == 1; }

ProgressBar::ProgressBar(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)), total_(total), active_(enabled && on_terminal()),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(int64_t done, const std::string& suffix) {
  done_ = done;
  if (!active_) return;
  auto now = std::chrono::steady_clock::now();
  if (done_ < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(suffix);
}

void ProgressBar::draw(const std::string& suffix) {
  const int width = 30;
  double frac = total_ > 0 ? std::min(1.0, double(done_) / double(total_)) : 0.0;
  int fill = int(frac * width);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = secs > 0 ? double(done_) / secs : 0.0;
  std::string eta = (rate > 0 && total_ > done_) ? fmt::format(" eta {:.0f}s", double(total_ - done_) / rate) : "";
  std::string line = fmt::format("\r{} [{}{}] {}/{} {:.1f}/s{} {}\x1b[K", label_, std::string(fill, '#'),
                                 std::string(width - fill, '.'), done_, total_, rate, eta, suffix);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (!active_ || finished_) return;
  finished_ = true;
  draw("");
  std::fputc('\n', stderr);
}

}  // namespace trex
