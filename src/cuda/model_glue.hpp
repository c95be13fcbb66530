// The GPU model's glue on the device: the small loops of model/model.cpp's forward_range / backward_range between
// the components — the token embedding (every stream of a position starts as its token's row; the MTP modules'
// single-stream gather), its gradient, the MTP's broadcast of the embedding projection over the streams and the
// stream sum of its backward, the row-block copies between the [B, T] and [B, Tm] layouts, a scale and an
// accumulate. Device pointers, queued on a stream; every row of d floats.
//
// Deterministic and in the CPU's order, without floating-point atomics: the embedding gradient adds, per token id,
// the rows of its positions in increasing position order and, within a position, the streams in increasing order
// onto the gradient's current value — exactly the CPU's additions (`for i, for k: g += dX[i n + k]`), so the result
// has the CPU loop's bits. The inverse lists it walks (each distinct token id with its positions, increasing) are
// built on the host from the host tokens (build_embedding_lists) and uploaded by the caller. The other sums (the
// stream sum: 0 + dX[k] for k increasing; the accumulates: one addition per element) are the CPU's too.
// The kernels trust their token ids: the caller checks them against the vocabulary on the host (the model does,
// and build_embedding_lists does). CUDA builds only (the kernels are model_glue.cu).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace trex::cuda {

// X[(i n + k) d + j] = embed[tokens[i] d + j] for i < rows, k < n, j < d: each of the n streams of position i
// starts as its token's embedding (n = 1: the MTP's gather e[r] = embed[tok[r]]). tokens: device, in [0, V).
void embedding_forward(const float* embed, const int32_t* tokens, int64_t rows, int64_t n, int64_t d, float* X,
                       cudaStream_t s);

// The inverse of a token list: the distinct ids in increasing order and, for ids[u], its positions
// positions[offsets[u] .. offsets[u + 1]) in increasing order. offsets has ids.size() + 1 entries (offsets[0] = 0,
// the last = rows); positions holds every position once.
struct EmbeddingLists {
  std::vector<int32_t> ids, offsets, positions;
  int64_t distinct() const { return int64_t(ids.size()); }
};

// The lists of tokens[0 .. rows) (host). trex::Error for a token outside [0, V), rows < 0, V <= 0, or more rows than
// an int32 position holds. O(rows + V).
EmbeddingLists build_embedding_lists(const int32_t* tokens, int64_t rows, int64_t V);

// gE[ids[u] d + j] += sum over p in positions[offsets[u] .. offsets[u + 1]) (increasing), k < n (increasing) of
// dX[(p n + k) d + j], added one term at a time onto gE's value, for u < distinct: the CPU's
// `for i: for k: gE[tokens[i]] += dX[i n + k]` with the same bits (n = 1: the MTP modules' gradient, rows r with
// token tok[r]). ids, offsets, positions: build_embedding_lists' arrays on the device. One thread per (id, column):
// rows of ids that do not occur are untouched.
void embedding_backward(const int32_t* ids, const int32_t* offsets, const int32_t* positions, int64_t distinct,
                        const float* dX, int64_t n, int64_t d, float* gE, cudaStream_t s);

// X[(r n + k) d + j] += e[r d + j] for r < rows, k < n: the MTP's embedding projection added to every stream.
void add_to_streams(float* X, const float* e, int64_t rows, int64_t n, int64_t d, cudaStream_t s);
// out[r d + j] = sum over k < n of dX[(r n + k) d + j], summed from 0 in increasing k (the CPU's zeroed buffer and
// +=; overwrites out): add_to_streams' backward.
void sum_streams(const float* dX, int64_t rows, int64_t n, int64_t d, float* out, cudaStream_t s);

// dst[b dst_stride + j] = src[b src_stride + j] for b < rows, j < width (width <= both strides; the rest of dst's
// rows untouched): the MTP's Xin[b, :Tm] = Xprev[b, :Tm] with rows of Tm n d floats.
void copy_row_blocks(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t width,
                     int64_t rows, cudaStream_t s);
// dst[b dst_stride + j] += src[b src_stride + j], the same ranges: the MTP's dprev[b, :Tm] += dXin[b].
void add_row_blocks(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t width,
                    int64_t rows, cudaStream_t s);

// x[i] *= a for i < count.
void scale_in_place(float* x, int64_t count, float a, cudaStream_t s);
// y[i] += x[i] for i < count.
void add_in_place(float* y, const float* x, int64_t count, cudaStream_t s);

}  // namespace trex::cuda
