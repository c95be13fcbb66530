// The CPU side of the device-optimizer checks (tests/cuda/gpu/optimizer_ref.hpp, optimizer_cases.hpp), which needs
// no device: the dgemm twin of the Newton–Schulz oracle agrees with it; the bf16-operand recipe differs from it by
// a bf16-sized amount; the fp32 Newton–Schulz bound holds with room for the CPU trainer's own fp32 iteration; and
// the device AdamW's host constants (cuda::adamw_constants) with the kernel's per-element formula reproduce
// train::Optimizer within AdamWBound, while a wrong bias correction falls outside it (the bound can fail).
// CUDA builds only (the harness links the CUDA backend); runs on machines without a GPU.
#include <gtest/gtest.h>

#if TREX_HAVE_CUDA
#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda/optimizer.hpp"
#include "op_check.hpp"
#include "optimizer_ref.hpp"
#include "train/optimizer.hpp"
#include "util/rng.hpp"
#include "float_vectors.hpp"

using namespace trex;
using namespace trex::cuda::check;

namespace {
using trex::testing::max_abs;
double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
  return m;
}
constexpr double kU = 1.0 / 16777216.0;
double ns_fp32_tol(int64_t rows, int64_t cols, double max_x) {  // optimizer_cases.hpp's bound
  return 64 * kU * std::sqrt(double(std::max(rows, cols))) * max_x;
}
const std::vector<std::pair<int64_t, int64_t>> kShapes{{33, 70}, {70, 33}, {64, 64}, {16, 200}};
}  // namespace

TEST(CudaOptimizerRef, NewtonSchulzDoubleTwinMatchesTheOracle) {
  for (const auto& [rows, cols] : kShapes) {
    Rng rng(uint64_t(rows * 100 + cols));
    const std::vector<float> x = randn(rng, size_t(rows * cols), 0.02);
    std::vector<float> ref = x;
    train::newton_schulz_reference(ref, rows, cols, 10);
    const std::vector<float> twin = newton_schulz_double(x, rows, cols, 10);
    // both in double, rounded to float once: at most a flipped last-bit rounding apart
    EXPECT_LE(max_diff(twin, ref), 0x1.0p-22 * max_abs(ref)) << rows << "x" << cols;
  }
}

TEST(CudaOptimizerRef, Bf16RecipeIsBf16SizedAwayFromTheOracle) {
  for (const auto& [rows, cols] : kShapes) {
    Rng rng(uint64_t(rows * 100 + cols));
    const std::vector<float> x = randn(rng, size_t(rows * cols), 0.02);
    std::vector<float> ref = x;
    train::newton_schulz_reference(ref, rows, cols, 10);
    const double d = max_diff(newton_schulz_bf16_operands(x, rows, cols, 10), ref);
    EXPECT_GT(d, ns_fp32_tol(rows, cols, max_abs(ref))) << rows << "x" << cols;  // the operands really are bf16
    EXPECT_LT(d, 0.05 * max_abs(ref)) << rows << "x" << cols;                    // and the recipe is right
  }
}

TEST(CudaOptimizerRef, Fp32BoundLeavesRoomForTheTrainersOwnIteration) {
  // One Muon step from p = 0 without weight decay gives p' = -lr scale NS(x): the trainer's fp32 Newton–Schulz
  // (cblas products) recovered to within 2 roundings. It must sit well inside the bound the device is held to.
  for (const auto& [rows, cols] : kShapes) {
    Rng rng(uint64_t(rows * 100 + cols + 7));
    const int64_t n = rows * cols;
    const std::vector<float> g = randn(rng, size_t(n), 0.01);
    train::OptimizerConfig cfg;
    cfg.kind = train::OptimizerKind::Muon;
    cfg.muon_weight_decay = 0;
    train::Optimizer opt({{"layers.0.ffn.w1.weight", 0, n, rows, cols, 2, true}}, n, cfg);
    ASSERT_TRUE(opt.is_muon(0));
    std::vector<float> p(size_t(n), 0.0f);
    const double lr = 0.02;
    opt.step(p, g, lr);
    const double k = double(float(lr)) * double(float(std::sqrt(double(std::max(rows, cols))) * cfg.muon_scale));
    std::vector<float> x_cpu(static_cast<size_t>(n)), input(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      x_cpu[size_t(i)] = float(-double(p[size_t(i)]) / k);
      input[size_t(i)] = float(cfg.muon_momentum) * g[size_t(i)] + g[size_t(i)];  // Nesterov from m = g
    }
    const std::vector<float> ref = newton_schulz_double(input, rows, cols, 10);
    const double dev = max_diff(x_cpu, ref), tol = ns_fp32_tol(rows, cols, max_abs(ref));
    EXPECT_LT(dev, tol / 4) << rows << "x" << cols << ": the CPU's fp32 iteration is " << dev << " from the double one";
  }
}

namespace {
// The device kernel's per-element AdamW (src/cuda/adamw.cu) on the host, with cuda::adamw_constants.
void adamw_like_kernel(std::vector<float>& p, std::vector<float>& m, std::vector<float>& v, const float* g, float gs,
                       const trex::cuda::AdamWConstants& c) {
  for (size_t i = 0; i < p.size(); ++i) {
    const float gi = g[i] * gs;
    m[i] = c.beta1 * m[i] + (1.0f - c.beta1) * gi;
    v[i] = c.beta2 * v[i] + (1.0f - c.beta2) * gi * gi;
    p[i] = p[i] * c.decay - c.step * m[i] / (std::sqrt(v[i]) * c.inv_sqrt_bc2 + c.eps);
  }
}

// `steps` steps of one matrix on train::Optimizer and on the kernel's formula (bias corrections of step
// t + t_shift): the comparisons of p under AdamWBound.
Compare adamw_against_cpu(int steps, int t_shift) {
  const int64_t rows = 19, cols = 45, n = rows * cols;
  train::OptimizerConfig cfg;
  cfg.weight_decay = 0.1;
  train::Optimizer opt({{"layers.0.ffn.w1.weight", 0, n, rows, cols, 2, true}}, n, cfg);
  Rng rng(77);
  std::vector<float> p = randn(rng, size_t(n), 0.05), q = p, m(size_t(n), 0.0f), v(size_t(n), 0.0f);
  const std::vector<float> grads = randn(rng, size_t(n * steps), 0.01);
  AdamWBound bound(static_cast<size_t>(n));
  for (int s = 0; s < steps; ++s) {
    const double lr = train::lr_at(s, 2, steps, 1e-2, 1e-3);
    const float* g = grads.data() + size_t(s * n);
    const trex::cuda::AdamWConstants c =
        trex::cuda::adamw_constants(lr, s + 1 + t_shift, cfg.beta1, cfg.beta2, cfg.eps, cfg.weight_decay);
    bound.step(p.data(), opt.moment(0, 0).data(), opt.moment(0, 1).data(), g, 0.8f, c.decay, c.beta1, c.beta2, c.step,
               c.inv_sqrt_bc2, c.eps);
    opt.step(p, std::span<const float>(grads).subspan(size_t(s * n), size_t(n)), lr, 0.8f);
    adamw_like_kernel(q, m, v, g, 0.8f, c);
  }
  return compare_bound("p", q, p, bound.p_bound());
}
}  // namespace

TEST(CudaOptimizerRef, AdamWConstantsAndFormulaMatchTheCpuWithinTheBound) {
  for (int steps : {1, 5}) {
    const Compare c = adamw_against_cpu(steps, 0);
    EXPECT_TRUE(c.ok()) << c.str();
  }
  const Compare wrong = adamw_against_cpu(3, 1);  // the bias corrections of the next step: outside the bound
  EXPECT_FALSE(wrong.ok()) << wrong.str();
}

TEST(CudaOptimizerRef, NewtonSchulzCoefficientsAreTheCpuSchedule) {
  // train/optimizer.cpp: steps 1-8 (3.4445, -4.7750, 2.0315), 9-10 (2, -1.5, 0.5) (OptimizerConfig's comment)
  for (int s = 0; s < 10; ++s) {
    const trex::cuda::NsCoefficients k = trex::cuda::newton_schulz_coefficients(s);
    if (s < 8) {
      EXPECT_EQ(k.a, 3.4445);
      EXPECT_EQ(k.b, -4.7750);
      EXPECT_EQ(k.c, 2.0315);
    } else {
      EXPECT_EQ(k.a, 2.0);
      EXPECT_EQ(k.b, -1.5);
      EXPECT_EQ(k.c, 0.5);
    }
  }
}
#endif
