// The op checks of the harness (op_check.hpp): each runs one CUDA op and its CPU reference on the same seeded
// inputs, forward and backward where the op has one, and returns the comparisons (and, in perf mode, the timing).
// The shape is the caller's: small and odd for the gpu tests, the model's sizes for the perf mode.
#pragma once
#include <cstdint>

#include "cuda/blas.hpp"
#include "op_check.hpp"

namespace trex::cuda::check {

// C = alpha op(A) op(B) + beta C through cuBLASLt against nn::gemm_reference / gemm_bf16_reference (bf16: the
// operands rounded on the device). Bound per element: 2 k u sum_k |a||b| + 4 u |beta c| (u = 2^-24, fp32
// accumulation in any order). Perf shapes: the reference is computed for `sample_rows` rows of C only (0: all).
// Also checks that a second identical call gives the same bits (deterministic algorithm).
OpReport check_gemm(Harness& h, Blas& blas, GemmType type, bool trans_a, bool trans_b, int64_t m, int64_t n,
                    int64_t k, float beta, int64_t sample_rows = 0);
// nn::float_to_bf16 over n random values plus the special ones (zeros, denormals, ties, inf, NaN): bitwise.
OpReport check_bf16_round(Harness& h, int64_t n);
// RMSNorm forward (y, rstd) and backward (dx, accumulated dx, dw) against nn::rmsnorm_*_ref.
OpReport check_rmsnorm(Harness& h, int64_t rows, int64_t dim, bool weighted);
// RoPE forward and inverse against nn::rope_apply_ref (YaRN table, partial rotary dims).
OpReport check_rope(Harness& h, int64_t n, int64_t heads, int64_t head_dim, int64_t r);
// Limited SwiGLU forward and backward against nn::swiglu_*_ref, inputs reaching past the limit.
OpReport check_swiglu(Harness& h, int64_t n, float limit);
// mHC Sinkhorn forward and backward of `count` n x n matrices in the model's layout (dA written into rows of
// (2 + n) n at offset 2n, as mhc.cpp's gate gradient) against nn::sinkhorn_*_batch, held to 4x the CPU float
// path's own largest distance from the double twin (sinkhorn_ref.hpp) + 8 u max|ref|; the slots between the dA
// rows untouched (exactly the sentinel); exactly the same values on a second call.
OpReport check_sinkhorn(Harness& h, int64_t count, int n, int iters);
// Cross-entropy (loss, dlogits fp32 and bf16, ignored rows) against nn::softmax_xent_ref.
OpReport check_xent(Harness& h, int64_t rows, int64_t vocab, float scale);
// Row-wise top-k (the indexer's selection) against nn::topk_lower_index, exactly (indices and order): rows of
// varying length (empty, shorter than k, exactly k), a base added, a row stride, levels > 0 integer scores with
// many ties (0: normal scores), and -0, +-inf, denormals, -max sprinkled in; then full rows with null n and base.
OpReport check_topk(Harness& h, int64_t rows, int64_t cols, int64_t k, int levels);

}  // namespace trex::cuda::check
