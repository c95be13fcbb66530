// Op checks of the GPU model's glue (cuda/model_glue.hpp) against model/model.cpp's own loops, copied here as the
// oracle (the *_cpu functions below, each with the model line it copies): the embedding and the MTP's gather, the
// embedding gradient of the main path and of an MTP module in the model's order, the broadcast over the streams and
// the stream sum, the MTP's row-block copy and accumulate, a scale and an accumulate. Every one of these does the
// CPU's operations in the CPU's order, so every comparison is BITWISE: outputs NaN-filled first (an unwritten
// element fails), accumulated outputs start from seeded values, inputs of magnitudes spread over 2^-12 .. 2^12 (a
// sum in another order then gives other bits: tests/cuda/embedding_lists_test.cpp shows it on the CPU). The gpu
// tests (glue_test.cpp) drive them at small and odd shapes; the CPU oracles and the lists' summation twin are
// also what tests/cuda/embedding_lists_test.cpp checks without a device.
#pragma once
#include <cstdint>
#include <vector>

#include "cuda/model_glue.hpp"
#include "op_check.hpp"
#include "util/rng.hpp"

namespace trex::cuda::check {

// ---------------------------------------------------------------- the oracles (model.cpp's loops)
// forward_range: X0[(i n + k) d + :] = embed[tokens[i] d + :] (n = 1: the MTP's e[r] = embed[tok[r]]).
void embedding_forward_cpu(const float* embed, const int32_t* tokens, int64_t rows, int64_t n, int64_t d, float* X);
// backward_range: for i, (g = gE + tokens[i] d), for k, for j: g[j] += dX[(i n + k) d + j].
void embedding_backward_cpu(const int32_t* tokens, int64_t rows, int64_t n, int64_t d, const float* dX, float* gE);
// The device kernel's order replayed on the CPU from the lists: per id, acc = gE; acc += dX over its positions in
// list order and k increasing (reversed: the positions in decreasing order, a wrong order for the tests to reject).
void embedding_backward_lists_twin(const EmbeddingLists& L, int64_t n, int64_t d, const float* dX, float* gE,
                                   bool reversed = false);
// forward_range's MTP: Xm[(r n + k) d + j] += ep[r d + j].
void add_to_streams_cpu(float* X, const float* e, int64_t rows, int64_t n, int64_t d);
// backward_range's MTP: dep zeroed, then dep[r d + j] += dXm[(r n + k) d + j] for k increasing.
void sum_streams_cpu(const float* dX, int64_t rows, int64_t n, int64_t d, float* out);
// the MTP tokens of module `shift - 1`: tok[b Tm + t] = tokens[b T + t + shift] (forward_range's ms.e gather).
std::vector<int32_t> mtp_tokens_cpu(const int32_t* tokens, int64_t B, int64_t T, int64_t Tm, int64_t shift);

// Seeded values of spread magnitude: sign random, |x| = 2^e with e uniform in [-12, 12) (times a uniform mantissa).
std::vector<float> spread(Rng& r, size_t count);
// Seeded tokens in [0, V): skewed: 40 % of them id 0 and one position each of 0 and V - 1 guaranteed (long lists,
// the ends of the vocabulary); else uniform.
std::vector<int32_t> draw_tokens(Rng& r, int64_t count, int64_t V, bool skewed);
// Bitwise comparison of two float vectors (NaN payloads included): the failing elements counted.
Compare same_bits(const std::string& what, const std::vector<float>& gpu, const std::vector<float>& ref);

// ---------------------------------------------------------------- the checks
// The embedding of B x T tokens over n streams of width d (vocabulary V) and MTP module 0's gather (Tm = T - 1,
// tokens shifted by 1); then the gradient in the model's order: the MTP module's rows first, then the main path's,
// both onto a seeded gE. misalign: every device pointer one float past a 16-byte boundary (the scalar path).
OpReport check_embedding(Harness& h, int64_t B, int64_t T, int64_t n, int64_t d, int64_t V, bool skewed,
                         bool misalign);
// add_to_streams and sum_streams on rows x n x d.
OpReport check_streams(Harness& h, int64_t rows, int64_t n, int64_t d, bool misalign);
// The MTP's row blocks: Xin[b, :Tm] = Xprev[b, :Tm] ([B, T] -> [B, Tm]), dprev[b, :Tm] += dXin[b] (the rest of
// dprev's rows unchanged), and a copy back into a [B, T] layout whose rows' tails must stay untouched.
OpReport check_row_blocks(Harness& h, int64_t B, int64_t T, int64_t Tm, int64_t n, int64_t d, bool misalign);
// scale_in_place and add_in_place over count floats.
OpReport check_flat(Harness& h, int64_t count, bool misalign);

}  // namespace trex::cuda::check
