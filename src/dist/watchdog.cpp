// Watchdog (see watchdog.hpp).
#include "dist/watchdog.hpp"

#include <fmt/format.h>

#include "dist/mpi_runtime.hpp"

namespace trex::dist {

Watchdog::Watchdog(double timeout_s) : timeout_s_(timeout_s), last_(std::chrono::steady_clock::now()) {
  if (timeout_s_ > 0) thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::beat(const char* phase) {
  std::lock_guard<std::mutex> lk(mu_);
  last_ = std::chrono::steady_clock::now();
  phase_ = phase;
}

void Watchdog::run() {
  const auto limit = std::chrono::duration<double>(timeout_s_);
  std::unique_lock<std::mutex> lk(mu_);
  while (!stop_) {
    cv_.wait_for(lk, std::chrono::milliseconds(200));
    if (stop_) break;
    const auto idle = std::chrono::steady_clock::now() - last_;
    if (idle > limit) {
      const std::string msg = fmt::format(
          "watchdog: no training progress for {:.1f} s (limit {:.1f} s) while in '{}' — a peer rank died or "
          "hangs; aborting the job (the last complete checkpoint is kept)",
          std::chrono::duration<double>(idle).count(), timeout_s_, phase_);
      lk.unlock();
      abort_job(msg, 70);
    }
  }
}

}  // namespace trex::dist
