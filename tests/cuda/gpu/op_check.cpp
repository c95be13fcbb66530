// The harness's comparisons, reports and timing (op_check.hpp).
#include "op_check.hpp"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <cstdio>

namespace trex::cuda::check {

std::string Compare::str() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: %s (max |err| %.3g, worst err/allowed %.3g at %lld, %lld/%lld out of bound)",
                what.c_str(), ok() ? "ok" : "FAIL", max_abs, worst_ratio, (long long)worst, (long long)bad,
                (long long)n);
  return buf;
}

bool OpReport::ok() const {
  if (checks.empty()) return false;
  for (const Compare& c : checks)
    if (!c.ok()) return false;
  return true;
}

std::string OpReport::str() const {
  std::string s = op + " [" + shape + "] " + (ok() ? "ok" : "FAIL");
  if (ms > 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, " | %.4f ms, %.1f GB/s", ms, bytes / (ms * 1e-3) / 1e9);
    s += buf;
    if (flops > 0) {
      const double tf = flops / (ms * 1e-3) / 1e12;  // H200 bf16 dense: 989 nominal, ~790 measured (MACHINE.md §9)
      std::snprintf(buf, sizeof buf, ", %.1f TFLOP/s (%.1f %% of 989, %.1f %% of 790)", tf, 100 * tf / 989,
                    100 * tf / 790);
      s += buf;
    }
  }
  for (const Compare& c : checks) s += "\n    " + c.str();
  return s;
}

Harness::Harness(bool perf, int iters, size_t scratch_bytes)
    : perf_(perf), iters_(iters), scratch_(scratch_bytes, "op-check scratch arena") {}

double Harness::time_ms(const std::function<void()>& fn) {
  fn();  // warm-up (cuBLASLt plans, first-touch)
  Event a, b;
  a.record(stream_);
  for (int i = 0; i < iters_; ++i) fn();
  b.record(stream_);
  return double(Event::elapsed_ms(a, b)) / iters_;
}

std::vector<float> randn(Rng& r, size_t n, double scale) {
  std::vector<float> v(n);
  for (float& x : v) x = float(scale * r.normal());
  return v;
}

std::vector<float> uniform(Rng& r, size_t n, double lo, double hi) {
  std::vector<float> v(n);
  for (float& x : v) x = float(r.uniform(lo, hi));
  return v;
}

namespace {
Compare run_compare(const std::string& what, const std::vector<float>& gpu, const std::vector<float>& ref,
                    const std::function<double(size_t)>& allowed) {
  Compare c;
  c.what = what;
  if (gpu.size() != ref.size()) {
    c.what += " (size mismatch)";
    c.n = int64_t(ref.size());
    c.bad = c.n > 0 ? c.n : 1;
    return c;
  }
  c.n = int64_t(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    const double err = std::fabs(double(gpu[i]) - double(ref[i]));
    const double lim = allowed(i);
    // NaN anywhere (or an infinite error) fails: !(err <= lim); it counts as the worst element
    const double ratio = lim > 0 ? err / lim : (err == 0 ? 0 : INFINITY);
    const double r = std::isnan(ratio) ? INFINITY : ratio;
    if (!(err <= lim)) ++c.bad;
    c.max_abs = std::max(c.max_abs, std::isnan(err) ? INFINITY : err);
    if (c.worst < 0 || r > c.worst_ratio) {
      c.worst_ratio = r;
      c.worst = int64_t(i);
    }
  }
  return c;
}
}  // namespace

Compare compare(const std::string& what, const std::vector<float>& gpu, const std::vector<float>& ref, double atol,
                double rtol) {
  return run_compare(what, gpu, ref, [&](size_t i) { return atol + rtol * std::fabs(double(ref[i])); });
}

Compare compare_bound(const std::string& what, const std::vector<float>& gpu, const std::vector<float>& ref,
                      const std::vector<double>& bound) {
  if (bound.size() != ref.size()) {
    Compare c;
    c.what = what + " (bound size mismatch)";
    c.n = c.bad = 1;
    return c;
  }
  return run_compare(what, gpu, ref, [&](size_t i) { return bound[i]; });
}

Compare compare_bits(const std::string& what, const std::vector<uint16_t>& gpu, const std::vector<uint16_t>& ref) {
  Compare c;
  c.what = what + " (bitwise)";
  c.n = int64_t(ref.size());
  if (gpu.size() != ref.size()) {
    c.bad = c.n > 0 ? c.n : 1;
    return c;
  }
  for (size_t i = 0; i < ref.size(); ++i)
    if (gpu[i] != ref[i]) {
      if (c.worst < 0) c.worst = int64_t(i);
      ++c.bad;
    }
  c.worst_ratio = c.bad ? INFINITY : 0;
  return c;
}

Compare compare_bitwise(const std::string& what, const std::vector<float>& gpu, const std::vector<float>& ref) {
  Compare c;
  c.what = what + " (bitwise)";
  c.n = int64_t(ref.size());
  if (gpu.size() != ref.size()) c.bad = c.n + 1;
  for (size_t i = 0; i < std::min(gpu.size(), ref.size()); ++i)
    if (std::memcmp(&gpu[i], &ref[i], sizeof(float)) != 0) {
      if (c.worst < 0) c.worst = int64_t(i);
      ++c.bad;
    }
  return c;
}

}  // namespace trex::cuda::check
