// Op checks of mHC's device arithmetic around its GEMMs and Sinkhorn (cuda/hc.hpp) against the CPU oracle
// nn::hc_*_ref (double, nn/hc.hpp), on seeded inputs: X [N, n, d], the mix GEMM's output raw, gate parameters, the
// backward's incoming gradients (the Sinkhorn's dA among them). Each device output is NaN-filled before the call and
// compared per element within a bound stated next to its comparison in hc_cases.cpp; a second run must give the
// same bits. The gpu tests (hc_test.cpp) drive them at small and odd shapes, trex_cuda_op_perf at the model's.
#pragma once
#include <cstdint>
#include <vector>

#include "op_check.hpp"

namespace trex::cuda::check {

// hc_pre without its GEMMs and Sinkhorn: hc_mix_rho (with the bf16 copy when bf16_copy: bitwise nn::round_to_bf16
// of X; rho the same bits with or without it, and from a misaligned copy of X), hc_pre_forward, then
// hc_pre_backward_gates, the Sinkhorn's dA copied into dz's comb columns, hc_gate_backward, hc_mix_backward_add.
OpReport check_hc_pre(Harness& h, int64_t N, int n, int64_t d, bool bf16_copy);
// hc_post_forward and hc_post_backward.
OpReport check_hc_post(Harness& h, int64_t N, int n, int64_t d);
// hc_head: hc_mix_rho, hc_head_forward, hc_head_backward_gates, hc_gate_backward (nout = n), hc_mix_backward_add.
OpReport check_hc_head(Harness& h, int64_t N, int n, int64_t d);
// The three at the model's sizes (n 4, d 4096; the bf16 copy on), for trex_cuda_op_perf.
std::vector<OpReport> check_hc_perf(Harness& h, int64_t N = 8192);

}  // namespace trex::cuda::check
