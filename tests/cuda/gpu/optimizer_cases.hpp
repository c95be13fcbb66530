// The optimizer op checks of the harness (op_check.hpp): the device AdamW, Newton–Schulz and Muon updates
// (cuda/optimizer.hpp) against the CPU trainer's (train::Optimizer, train::newton_schulz_reference) on the same
// inputs: one step or several, every output element within a stated bound, and in perf mode timed.
#pragma once
#include <cstdint>

#include "cuda/blas.hpp"
#include "op_check.hpp"

namespace trex::cuda::check {

// `steps` AdamW steps of two tensors (a rows x cols matrix with weight decay, a cols-long norm weight without)
// against train::Optimizer (AdamW), with the warm-up/cosine learning rates, a clip factor and some zero gradients.
// Bound per element: the first-order rounding bounds of AdamWBound (optimizer_ref.hpp) propagated over the steps,
// x2. bf16_copy: the bf16 parameter copy too (bitwise the rounding of the device's own fp32 result, and within
// 2^-8 relative of the CPU's). Perf: one update over every element (bytes: p, m, v read and written, g read).
OpReport check_adamw(Harness& h, int64_t rows, int64_t cols, int steps, bool bf16_copy);

// Newton–Schulz (10 steps, the hybrid schedule) of a rows x cols matrix against train::newton_schulz_reference
// (small shapes) or its dgemm twin newton_schulz_double (large ones). Bound: fp32 products
// 64 u sqrt(max(rows, cols)) max|ref| (u = 2^-24; measured CPU fp32 deviations are 15-30x below it); bf16 operands
// 3 max|sim - ref| + that, sim = newton_schulz_bf16_operands (the bf16 recipe on the CPU). Also bitwise the same
// on a second call. Perf: TFLOP/s of the 3 products per step, 10 (4 r^2 c + 2 r^3), r = min side, c = max.
OpReport check_newton_schulz(Harness& h, Blas& blas, GemmType type, int64_t rows, int64_t cols);

// `steps` Muon steps (momentum 0.95, Nesterov, fp32 Newton–Schulz, scale 0.18, weight decay 0.1) of a
// rows x cols matrix against train::Optimizer (Muon). Bound on p per step: 2u of each term plus lr scale times
// twice the Newton–Schulz fp32 bound (the device's and the CPU's own deviation), with max|X| recovered from the
// CPU's update, accumulated over the steps, x2; the momentum: 4u of its terms, accumulated, x2.
OpReport check_muon(Harness& h, Blas& blas, int64_t rows, int64_t cols, int steps);

}  // namespace trex::cuda::check
