// trex's own fp32 GEMM whose results depend on k alone: every C element is the same chain of fused multiply-adds
// along k (split into blocks of kKc, the blocks added in order), whatever m, n, the element's place in its
// micro-tile, or the other rows' and columns' values. So a row of C is bitwise the same whether it is computed
// alone or among any number of other rows: row-invariant by construction, on every CPU trex builds for.
//
// Why it exists: OpenBLAS promises no such thing. Its Haswell and Zen kernels (OPENBLAS_CORETYPE on Zen 5
// hosts) round the m-tail of a call differently from full tiles, so a product whose row count depends on the
// data — the routed experts' batches, whose sizes change when one token is routed elsewhere — changed earlier
// tokens' outputs in the last bits (issue #20). Those products run here (GemmCall::rows_invariant); every
// other fp32 product keeps OpenBLAS, whose shapes are fixed by the batch (docs/determinism.md).
//
// Layout: GotoBLAS loops (kc along k, mc rows, nc columns), A packed into row panels and B into column panels
// (zero padding), an 8 x 32 AVX-512 micro-kernel (16 accumulators; where the CPU has AVX-512F, as Zen 4 and 5 do)
// or a 6 x 16 AVX2 one (12 accumulators); tail tiles run the same kernel on the padded panels and copy out the
// valid part, so their arithmetic is identical to a full tile's. The tile shape changes no result: each element
// is the same fma chain in either kernel (both are bitwise equal to gemm_fixed_order_reference).
#pragma once
#include "nn/gemm.hpp"

namespace trex::nn {

struct FixedOrderBlocking {
  static constexpr int64_t kMR = 6, kNR = 16;        // AVX2 micro-tile (registers)
  static constexpr int64_t kMR512 = 8, kNR512 = 32;  // AVX-512 micro-tile
  static constexpr int64_t kKc = 256;            // where the k sums are split: the only blocking results depend on
  static constexpr int64_t kMc = 96, kNc = 512;  // cache blocks (change no result)
};

// Which micro-kernel: the best this CPU has (AVX-512 where present), or AVX2 (every CPU trex builds for; the tests
// run it on AVX-512 machines too).
enum class FixedOrderKernel { best, avx2 };

// One call on the calling thread (gemm_batch spreads calls over threads). fp32 operands only (a and b given).
void gemm_fixed_order(const GemmCall& g, FixedOrderKernel kernel = FixedOrderKernel::best);

// The same order written as plain loops (per element: kKc-blocks of fma chains, alpha, beta as the kernel
// applies them): bitwise equal to gemm_fixed_order, for the tests.
void gemm_fixed_order_reference(const GemmCall& g);

}  // namespace trex::nn
