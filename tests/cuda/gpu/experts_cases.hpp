// The routed-expert op check (cuda/experts.hpp against nn::experts_forward_reference / experts_backward_reference,
// the oracle) and its CPU side: the seeded problem, the CPU runs of one expert (reference or fast path, fp32 or
// under nn::Bf16MatmulScope: the bf16 recipe), and the per-element bounds. The CPU side needs no device:
// tests/cuda/experts_ref_test.cpp holds the bounds to the CPU fast path against the reference, with margin, and
// shows them failing on a different recipe or a perturbed value.
//
// The bounds (experts_bounds below) are check_gemm's, propagated. Each product's accumulation error between two
// fp32 implementations of the same sum of k products: 3 k u sum |a||b| (u = 2^-24; the GPU within 2 k u of the
// exact sum even with truncating accumulation, the CPU within k u; bf16 products are exact in fp32), plus the
// difference of the operands themselves: sum D_j |b_j|, D_j the largest difference the two sides' operand j can
// have. Operands the two sides compute (h, w*h; dhw, dh, dg, du) carry a bound from the step before:
// - h = silu(min(g, L)) clamp(u, -L, L): |dh| <= |uv| (|silu'(gv)| Bg + Bg^2 / 4) + (|silu(gv)| + 1.1 Bg) Bu
//   (|silu''| <= 1/2, |silu'| <= 1.1, the clamps 1-Lipschitz) + 16 u |h| (the two SwiGLU kernels' own rounding:
//   expf / fast_expf within 2 ulp, a division and two products on each side);
// - w*h: |w| Bh (1 + u) + 2 u |w h|;
// - the backward (its inputs x, w, g, u, h, dy the same on both sides): dhw = dy W2 a product (so w*h, the mask of
//   the clamps and the SwiGLU's factors are identical), dh = w dhw as w*h, dg = dh uv silu'(gv) and du = dh gv s
//   within |factor| Bdh + 16 u (|dh| + Bdh) |uv| s (1 + |gv|) (resp. |gv s|): silu'(gv) = s (1 + gv (1 - s)) crosses
//   zero, so its rounding is bounded by its terms' size, not its value; dw a dot of f terms: sum |h| Bdhw +
//   3 (f + 1) u sum |h| |dhw|.
// Under bf16 an operand is rounded after it is computed: values within b of a centre c round into
// [rd(c - b), rd(c + b)] (rounding is monotone), so D is that interval's extent — usually 0, one bf16 step where c
// sits near a rounding boundary. (Where the centre is not the reference's own value — the backward's dhw, dg, du,
// recomputed here because the reference keeps them internal — D is the interval's full width.)
#pragma once
#include <cstdint>
#include <vector>

#include "cuda/blas.hpp"
#include "op_check.hpp"

namespace trex::cuda::check {

// A seeded routed-expert problem: `experts` experts of shape (d, f), counts[e] rows for expert e (grouped, in expert
// order), routing weights in [0.05, 1], the output gradient, the weight gradients' starting values (non-zero: the
// backward accumulates). The large tensors are windows of pools of seeded random values (each expert's matrix, each
// row of x and dy starts at its own seeded offset into its kind's pool), so that the model's sizes (6.4 GB of
// expert weights) take neither that much host memory nor seconds of random draws; the windows overlap, shifted, so
// the experts' matrices still differ.
struct ExpertsProblem {
  int64_t experts = 0, d = 0, f = 0;
  float limit = 0;
  std::vector<int64_t> offsets;  // [experts + 1]
  std::vector<float> x, w, dy;   // [rows, d], [rows], [rows, d]
  std::vector<float> pool_w13, pool_w2, pool_grad;
  std::vector<int64_t> at_w1, at_w3, at_w2, at_g1, at_g3, at_g2;  // each expert's window start in its pool

  int64_t rows() const { return offsets.back(); }
  int64_t rows_of(int64_t e) const { return offsets[size_t(e) + 1] - offsets[size_t(e)]; }
  const float* w1(int64_t e) const { return pool_w13.data() + at_w1[size_t(e)]; }  // [f, d]
  const float* w3(int64_t e) const { return pool_w13.data() + at_w3[size_t(e)]; }  // [f, d]
  const float* w2(int64_t e) const { return pool_w2.data() + at_w2[size_t(e)]; }   // [d, f]
  const float* g1_start(int64_t e) const { return pool_grad.data() + at_g1[size_t(e)]; }
  const float* g3_start(int64_t e) const { return pool_grad.data() + at_g3[size_t(e)]; }
  const float* g2_start(int64_t e) const { return pool_grad.data() + at_g2[size_t(e)]; }
};
ExpertsProblem make_experts_problem(int64_t experts, int64_t d, int64_t f, const std::vector<int64_t>& counts,
                                    float limit, uint64_t seed);

// `rows` routed slots over `experts` experts, uneven as routing is (log-normal loads, sigma 0.3: the busiest
// expert about twice the mean), `empty` of them (spread over the range) given none; the counts sum to rows.
std::vector<int64_t> uneven_counts(int64_t experts, int64_t rows, int64_t empty, uint64_t seed);

// One expert's values (or several experts' concatenated, expert after expert): forward g, u, h [n, f], y [n, d];
// backward dx [n, d], dw [n], the weight gradients g1, g3 [f, d], g2 [d, f]. Bounds: the same layout in double.
struct ExpertValues {
  std::vector<float> g, u, h, y, dx, dw, g1, g3, g2;
};
struct ExpertBounds {
  std::vector<double> g, u, h, y, dx, dw, g1, g3, g2;
};
void append(ExpertValues& all, const ExpertValues& one);
void append(ExpertBounds& all, const ExpertBounds& one);

// The CPU's forward of expert e alone into out.g/u/h/y: nn::experts_forward_reference (reference) or
// nn::experts_forward (the fast path); bf16: under nn::Bf16MatmulScope (throws trex::Error on a CPU without
// AVX512_BF16).
void cpu_experts_forward(const ExpertsProblem& p, int64_t e, bool reference, bool bf16, ExpertValues& out);
// The backward of expert e from the saved values io.g/u/h (given: the CPU's or the GPU's forward) into io.dx, dw,
// g1, g3, g2 (the weight gradients starting from the problem's values).
void cpu_experts_backward(const ExpertsProblem& p, int64_t e, bool reference, bool bf16, ExpertValues& io);

// Per-element bounds on |other - ref| for an implementation that runs the same recipe (fp32, or bf16 operands),
// derived above. Forward: from ref.g/u/h/y (the reference's forward). Backward: from the inputs ref.g/u/h (the
// backward's saved values) and the problem. Computed with fp32 host products of magnitudes (throws trex::Error
// under an active Bf16MatmulScope, which would round them).
ExpertBounds experts_forward_bounds(const ExpertsProblem& p, int64_t e, const ExpertValues& ref, bool bf16);
ExpertBounds experts_backward_bounds(const ExpertsProblem& p, int64_t e, const ExpertValues& ref, bool bf16);

// got against ref within the bounds, one Compare per output (forward: g, u, h, y; backward: dx, dw, g1, g3, g2).
std::vector<Compare> compare_experts(const ExpertValues& got, const ExpertValues& ref, const ExpertBounds& b,
                                     bool forward, bool backward, const std::string& prefix = "");

// The device's forward and backward (cuda::experts_forward / experts_backward; the backward from the device's own
// saved g, u, h) against the CPU reference of the same recipe, within the bounds above: counts[e] rows for expert e
// (experts without rows included: their weight gradients must stay exactly as they were). The backward's oracle
// runs on the device's saved values (the same inputs on both sides). Also: the same call twice gives the same bits;
// bf16 with the weights' bf16 copies given gives the same bits as with them rounded in scratch; each call runs in
// an arena of exactly experts_scratch_bytes. Perf shapes: the CPU side for `sample_experts` experts only (the
// busiest, the least busy and evenly spread ones; 0: all), and forward + backward timed (18 rows d f FLOP). bf16 on a
// host without AVX512_BF16 (no CPU bf16 recipe): the device runs, and the report fails, naming the reason.
OpReport check_experts(Harness& h, Blas& blas, GemmType type, int64_t experts, int64_t d, int64_t f,
                       const std::vector<int64_t>& counts, float limit, int64_t sample_experts = 0);

}  // namespace trex::cuda::check
