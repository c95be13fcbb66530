// Watchdog: a thread that aborts the whole MPI job (MPI_Abort) when the training loop has not reported progress
// for `timeout_s` seconds — a peer rank that hangs (or died without mpirun noticing) otherwise leaves every
// other rank blocked in a collective forever. The message names the rank and the phase it was stuck in.
#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace trex::dist {

class Watchdog {
 public:
  // timeout_s <= 0: disabled (no thread).
  explicit Watchdog(double timeout_s);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Reports progress; `phase` (a string literal) names what the loop does next.
  void beat(const char* phase);

 private:
  void run();
  double timeout_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::chrono::steady_clock::time_point last_;
  const char* phase_ = "start";
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace trex::dist
