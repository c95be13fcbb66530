// The token-level compressor's pooling (DEEPSEEK_V4.md §4): the arithmetic between its two input products
// (Cx = x Wkv, Zx = x Wgate, [N, W]) and its RMSNorm + RoPE, on a packed batch whose entry grid restarts at every
// document. Entry e pools the m tokens start[e] .. start[e] + m - 1 of its block; per channel ch < cdim:
//   S_k = softmax_k(Zx[slot k]),   pooled_e,ch = Σ_k S_k Cx[slot k]
// HCA (overlap false, W = cdim): m slots, slot k = token start + k, column ch.
// CSA (overlap true, W = 2 cdim): 2m slots; slots k < m are the previous block's tokens start - m + k in the
// columns [0, cdim), slots k >= m the own block's tokens start + k - m in the columns [cdim, 2 cdim). A document's
// block 0 (idx 0) has no previous block: its first m slots are empty (-inf logits, S 0).
// The gate logits get a learned absolute position embedding first: Zx[i] += ape[pos[i] % m] (ape [m, W]).
// Backward from dpooled: dCx = S dpooled, dZx = S dpooled (Cx - pooled) at every slot's (token, column), and
// gape[pos[i] % m] += dZx[i].
// The fast path (what model/attention.cpp runs; its loops moved here verbatim) and a readable reference (plain
// loops, double accumulation: the oracle of the fast path and of cuda/compressor).
#pragma once
#include <cstdint>

namespace trex::nn {

struct CompressorPool {
  int64_t N = 0, NE = 0;            // tokens, entries
  int64_t m = 0, cdim = 0;          // compression ratio (tokens per block), channels of an entry
  bool overlap = false;             // CSA's overlapping 2m-slot layout (true) or HCA's m slots (false)
  const int32_t* start = nullptr;   // [NE] global index of the entry's block's first token (blocks of m tokens
                                    //      from each document's start, only complete ones: model detail::Entries)
  const int32_t* idx = nullptr;     // [NE] block index inside its document (0: no previous block)
  const int32_t* pos = nullptr;     // [N] position of each token inside its document
  int64_t width() const { return (overlap ? 2 : 1) * cdim; }  // W, the row length of Cx, Zx, ape
  int64_t slots() const { return overlap ? 2 * m : m; }
};

// Zx [N, W] += ape[pos[i] % m] row by row (ape [m, W]): one fp32 add per element.
void compressor_ape_add(const CompressorPool& p, const float* ape, float* Zx);

// S [NE, slots, cdim], pooled [NE, cdim] from Cx, Zx [N, W] (Zx with the ape added). The empty slots of a CSA
// block 0 are not written (the model hands S in zeroed). OpenMP over entries.
void compressor_pool_forward(const CompressorPool& p, const float* Cx, const float* Zx, float* S, float* pooled);

// From S, pooled of the forward and dpooled [NE, cdim]: dCx, dZx [N, W]. Only the (token, column)s some entry
// reads are written; the caller zeroes dCx and dZx first (the tokens past a document's last complete block, and a
// CSA document's last block's columns [0, cdim), belong to no entry). OpenMP over entries.
void compressor_pool_backward(const CompressorPool& p, const float* Cx, const float* S, const float* pooled,
                              const float* dpooled, float* dCx, float* dZx);

// gape [m, W] += dZx [N, W] summed per position class pos % m, tokens in increasing order, straight into gape.
void compressor_ape_backward(const CompressorPool& p, const float* dZx, float* gape);

// The reference forward: logits Zx (+ ape[pos % m] when ape is not null, added in double), S [NE, slots, cdim]
// fully written (the empty slots 0), pooled [NE, cdim]; every value computed in double and rounded once.
void compressor_pool_forward_ref(const CompressorPool& p, const float* Cx, const float* Zx, const float* ape, float* S,
                                 float* pooled);
// The reference backward: dCx, dZx [N, W] fully written (0 where no entry reads), computed in double; when gape is
// not null, gape [m, W] += the double sum of the double dZx over each position class (rounded once).
void compressor_pool_backward_ref(const CompressorPool& p, const float* Cx, const float* S, const float* pooled,
                                  const float* dpooled, float* dCx, float* dZx, float* gape);

}  // namespace trex::nn
