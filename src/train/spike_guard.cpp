// Loss-spike guard (see spike_guard.hpp).
#include "train/spike_guard.hpp"

#include <cmath>

#include <fmt/format.h>

namespace trex::train {

double SpikeGuard::zscore(const std::deque<double>& w, double x) {
  double mean = 0;
  for (double v : w) mean += v;
  mean /= double(w.size());
  double var = 0;
  for (double v : w) var += (v - mean) * (v - mean);
  var /= double(w.size());
  // A floor on the spread: a perfectly flat window would otherwise flag any tiny change.
  double sd = std::max(std::sqrt(var), 1e-3 * std::max(std::fabs(mean), 1e-12));
  return (x - mean) / sd;
}

SpikeVerdict SpikeGuard::check(double loss, double grad_norm) {
  SpikeVerdict v;
  if (cfg_.z_max > 0 && int(losses_.size()) >= cfg_.min_samples) {
    v.loss_z = zscore(losses_, loss);
    v.grad_z = zscore(grads_, grad_norm);
    if (v.loss_z > cfg_.z_max) v.reason = fmt::format("loss {:.4g} z={:.1f}", loss, v.loss_z);
    if (v.grad_z > cfg_.z_max)
      v.reason += fmt::format("{}grad norm {:.4g} z={:.1f}", v.reason.empty() ? "" : ", ", grad_norm, v.grad_z);
    v.skip = !v.reason.empty();
  }
  if (v.skip) {
    ++skipped_;
    return v;
  }
  losses_.push_back(loss);
  grads_.push_back(grad_norm);
  while (int(losses_.size()) > cfg_.window) {
    losses_.pop_front();
    grads_.pop_front();
  }
  return v;
}

nlohmann::json SpikeGuard::to_json() const {
  return {{"window", cfg_.window}, {"min_samples", cfg_.min_samples}, {"z_max", cfg_.z_max},
          {"losses", losses_}, {"grad_norms", grads_}, {"skipped", skipped_}};
}

void SpikeGuard::from_json(const nlohmann::json& j) {
  losses_.clear();
  grads_.clear();
  for (auto& x : j.at("losses")) losses_.push_back(x.get<double>());
  for (auto& x : j.at("grad_norms")) grads_.push_back(x.get<double>());
  skipped_ = j.at("skipped").get<int64_t>();
}

}  // namespace trex::train
