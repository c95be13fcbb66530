// Op check of the device compressor pooling (cuda/compressor.hpp) against its CPU oracles on seeded packed-batch
// inputs whose entry grid restarts at every document: the ape add and the backward's dCx, dZx against the CPU fast
// path bit for bit (the same single fp32 operations), the forward's S and pooled and the backward's dCx, dZx, gape
// against the double reference nn::compressor_pool_*_ref within the bounds below, gape also bit for bit against
// the host replay of the device's summation order, every output NaN-filled first and the same bits on a second call.
// The harness (op_check.hpp) drives it from the gpu tests (small and odd shapes) and trex_cuda_op_perf (the model's
// sizes). The grid, the replay and the bounds are exported for tests/cuda/compressor_ref_test.cpp (no GPU).
#pragma once
#include <cstdint>
#include <vector>

#include "op_check.hpp"

namespace trex::cuda::check {

// A packed batch's geometry for ratio m: model/detail::Seq::build's logic (copied: tests may not link model/) on
// documents starting at doc_starts (the first 0): pos [N], and the entries' start and idx [NE] (blocks of m tokens
// from each document's start, complete ones only).
struct CompressorGrid {
  int64_t N = 0, NE = 0, m = 0;
  std::vector<int32_t> pos, start, idx;
};
CompressorGrid compressor_grid(int64_t N, int64_t m, std::vector<int64_t> doc_starts);

// Bounds on |device - reference| per element (each derivation stated in compressor_cases.cpp). Forward, from the
// fp32 Zx (ape added) and Cx [N, W]: S [NE, slots, cdim] (the empty slots: exactly 0) and pooled [NE, cdim], from
// the reference's S.
void pool_forward_bounds(const CompressorGrid& g, int64_t cdim, bool overlap, const std::vector<float>& Cx,
                         const std::vector<float>& Zx, const std::vector<float>& S_ref, std::vector<double>& bS,
                         std::vector<double>& bpooled);
// Backward, from the S, pooled the backward read and dpooled: dCx, dZx [N, W] (exactly 0 where no entry reads).
void pool_backward_bounds(const CompressorGrid& g, int64_t cdim, bool overlap, const std::vector<float>& Cx,
                          const std::vector<float>& S, const std::vector<float>& pooled,
                          const std::vector<float>& dpooled, std::vector<double>& bdCx, std::vector<double>& bdZx);
// gape [m, W] from the reference's dZx (double-rounded to float), its bound bdZx and gape's value before the call.
std::vector<double> ape_grad_bound(const CompressorGrid& g, int64_t W, const std::vector<float>& dZx_ref,
                                   const std::vector<double>& bdZx, const std::vector<float>& gape0);

// The device's ape-gradient order (cuda/compressor.hpp kApeGradChunkTokens) replayed in fp32: gape0 + the chunk
// partials (tokens in increasing order from 0) summed in chunk order from 0. Adds only: the device's bits.
std::vector<float> ape_grad_replay(const CompressorGrid& g, int64_t W, const std::vector<float>& dZx,
                                   const std::vector<float>& gape0);

// N tokens in documents at doc_starts, ratio m, cdim channels, HCA (overlap false) or CSA (true).
OpReport check_compressor_pool(Harness& h, int64_t N, int64_t m, int64_t cdim, bool overlap,
                               const std::vector<int64_t>& doc_starts);

// trex_cuda_op_perf's shapes (the model's): N 8192 (quick: 2048) tokens in three documents, CSA (m 4, cdim 512,
// overlapping) and HCA (m 128, cdim 512).
std::vector<OpReport> check_compressor_pool_perf(Harness& h, bool quick);

}  // namespace trex::cuda::check
