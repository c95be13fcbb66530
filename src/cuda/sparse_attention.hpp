// The attention core of every layer kind on the device, the CUDA twin of nn/sparse_attention.hpp: for query i and
// head h one joint softmax over its sliding-window keys kv[ws[i] .. i], its compressed entries C[comp[i][0 ..
// ncomp[i])] and a per-head sink logit (the denominator only); K == V, one kv row per token shared by the heads.
// Forward (P, o) and backward (dq, dkv, dC, dsink). nn::sparse_attention_*_ref is the oracle (tests/cuda/gpu/
// attention_cases.hpp). Deterministic without atomics: every sum has a fixed order for a given shape and lists
// (sparse_attention.cu states them). CUDA builds only.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/arena.hpp"

namespace trex::cuda {

// nn::SparseAttention's fields, device pointers.
struct DeviceSparseAttention {
  int64_t N = 0, H = 0, hd = 0;    // queries (one per token), heads, head_dim (<= kMaxAttentionHeadDim)
  int64_t window = 0;              // sliding window w: query i's window keys are ws[i] .. i, i - ws[i] < w
  int64_t NE = 0, cmax = 0;        // compressed entries; the row stride of comp
  const float* q = nullptr;        // [N, H, hd]
  const float* kv = nullptr;       // [N, hd]
  const float* C = nullptr;        // [NE, hd] (may be null when no query lists an entry)
  const int32_t* ws = nullptr;     // [N] first window key of each query (the model: max(doc_start[i], i - w + 1))
  const int32_t* comp = nullptr;   // [N, cmax] each query's entries, its first ncomp[i] used, in order
  const int32_t* ncomp = nullptr;  // [N]
  const float* sink = nullptr;     // [H]
  float scale = 1;                 // logit scale (the model: 1 / sqrt(hd))
  int64_t kmax() const { return window + cmax; }  // P's row length
};

constexpr int64_t kMaxAttentionHeadDim = 512;

// P [N, H, kmax]: row (i, h) gets its first nw + ncomp[i] probabilities (window keys first; the rest of the row is
// not written); o [N, H, hd]. One block per (query, group of heads). Throws trex::Error on unsupported sizes.
void sparse_attention_forward(const DeviceSparseAttention& a, float* P, float* o, cudaStream_t s);

// Device memory the backward takes from `scratch` (released before it returns).
size_t sparse_attention_backward_scratch_bytes(const DeviceSparseAttention& a);
// From P and o of the forward and g = dL/do [N, H, hd]: dq [N, H, hd], dkv [N, hd], dC [NE, hd], dsink [H], all
// overwritten (dsink is the sum to add to the sink's gradient).
void sparse_attention_backward(const DeviceSparseAttention& a, const float* P, const float* o, const float* g,
                               float* dq, float* dkv, float* dC, float* dsink, DeviceArena& scratch, cudaStream_t s);

}  // namespace trex::cuda
