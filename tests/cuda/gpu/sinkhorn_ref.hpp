// A double-precision twin of the CPU's mHC Sinkhorn (nn::sinkhorn_forward / sinkhorn_backward: the same
// softmax + eps, normalisation order and unrolled backward, every value in double), for the op check's bound: the
// CUDA kernel is held to a few times the CPU float path's own distance from it (op_cases.hpp, check_sinkhorn).
// Tested against the CPU and by finite differences in tests/cuda/sinkhorn_ref_test.cpp.
#pragma once
#include <vector>

namespace trex::cuda::check {

// One n x n matrix a (row-major) -> m.
std::vector<double> sinkhorn_forward_double(const float* a, int n, int iters, double eps);
// dA from dM for the same matrix.
std::vector<double> sinkhorn_backward_double(const float* a, const float* dm, int n, int iters, double eps);
// The forward from a double matrix (for finite differences).
std::vector<double> sinkhorn_forward_double(const std::vector<double>& a, int n, int iters, double eps);

}  // namespace trex::cuda::check
