// Loss-spike guard: keeps a running window of recent losses and gradient norms and flags a step whose loss
// or gradient norm lies more than `z_max` standard deviations above the window mean (the trainer then skips
// the update). Flagged values do not enter the window, so one spike cannot widen the band for the next.
// The whole state (window contents, counts) round-trips through JSON for exact resume.
#pragma once
#include <cstdint>
#include <deque>
#include <string>

#include <nlohmann/json.hpp>

namespace trex::train {

struct SpikeGuardConfig {
  int window = 50;       // values kept
  int min_samples = 20;  // no verdict before this many accepted steps
  double z_max = 6.0;    // 0 or less: guard disabled
};

struct SpikeVerdict {
  bool skip = false;
  double loss_z = 0, grad_z = 0;
  std::string reason;  // "loss z=7.1" etc. when skip
};

class SpikeGuard {
 public:
  explicit SpikeGuard(SpikeGuardConfig cfg = {}) : cfg_(cfg) {}
  // Judges a step; when it is not a spike its values enter the window.
  SpikeVerdict check(double loss, double grad_norm);
  int64_t skipped() const { return skipped_; }

  nlohmann::json to_json() const;
  void from_json(const nlohmann::json& j);

 private:
  static double zscore(const std::deque<double>& w, double x);
  SpikeGuardConfig cfg_;
  std::deque<double> losses_, grads_;
  int64_t skipped_ = 0;
};

}  // namespace trex::train
