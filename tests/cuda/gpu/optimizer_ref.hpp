// The CPU side of the optimizer op checks (optimizer_cases.hpp), none of which needs a device:
// - Newton–Schulz at the perf mode's sizes: train::newton_schulz_reference (double, plain loops) is the oracle but
//   too slow there, so newton_schulz_double runs the same algorithm in double through cblas_dgemm (tested against
//   the oracle in op_compare_test.cpp); newton_schulz_bf16_operands is the algorithm with every product's operands
//   rounded to bf16 and fp32 accumulation (cblas_sgemm) — the CUDA bf16 path's own recipe, used to size its bound.
// - AdamW's error bound: first-order rounding-error bounds of one element's update, propagated along the CPU
//   trajectory over several steps (the GPU may contract a*b+c into an FMA where the CPU does not, or the reverse).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trex::cuda::check {

std::vector<float> newton_schulz_double(const std::vector<float>& x, int64_t rows, int64_t cols, int steps);
std::vector<float> newton_schulz_bf16_operands(const std::vector<float>& x, int64_t rows, int64_t cols, int steps);

// Per-element error bounds of p, m, v after the steps fed so far, for one tensor.
class AdamWBound {
 public:
  explicit AdamWBound(size_t n) : ep_(n, 0.0), em_(n, 0.0), rv_(n, 0.0) {}
  // One step from the CPU's state before it (p, m, v) with gradient g * gs and the step's float constants.
  void step(const float* p, const float* m, const float* v, const float* g, float gs, float decay, float beta1,
            float beta2, float step_size, float inv_sqrt_bc2, float eps);
  // Bounds (x2 for the neglected second-order terms) against the CPU state after the last step (its v: for the
  // relative bound of v).
  std::vector<double> p_bound() const;
  std::vector<double> m_bound() const;
  std::vector<double> v_bound(const float* v_after) const;

 private:
  std::vector<double> ep_, em_, rv_;  // |error| of p and m; relative error of v
};

}  // namespace trex::cuda::check
