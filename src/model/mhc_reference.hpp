// Readable per-token reference of mHC (DEEPSEEK_V4.md §6) in double precision, written straight from the
// formulas: the tests compare the fused kernels of mhc.cpp with it and take finite differences through it.
#pragma once
#include <cstdint>

namespace trex::model {

// One token. X [n, d]; fn [(2+n)*n, n*d]; base [(2+n)*n]; scale [3]. Outputs y [d], pre [n], post [n], M [n*n].
void hc_pre_reference(int64_t n, int64_t d, int iters, double eps, double hc_eps, const float* X, const float* fn,
                      const float* base, const float* scale, double* y, double* pre, double* post, double* M);
// X'_k = post_k F + sum_j M_jk X_j. F [d], X [n, d] -> Xout [n, d].
void hc_post_reference(int64_t n, int64_t d, const float* F, const float* X, const double* post, const double* M,
                       double* Xout);

}  // namespace trex::model
