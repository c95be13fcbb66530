// The token-level compressor's pooling on the device (DEEPSEEK_V4.md §4), the CUDA twin of nn/compressor_pool.hpp:
// the ape add into the gate logits, the softmax pooling of each entry's slots (HCA: m slots; CSA: 2m overlapping
// slots, a document's block 0 without its previous m), its backward and the ape gradient. The products around it
// (Cx = x Wkv, Zx = x Wgate) and its RMSNorm + RoPE are Blas / ops.hpp calls. nn::compressor_pool_*_ref is the
// oracle (tests/cuda/gpu/compressor_cases.hpp). Deterministic without atomics: every sum has a fixed order for a
// shape (compressor.cu states them). CUDA builds only.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/arena.hpp"

namespace trex::cuda {

// nn::CompressorPool's fields, device pointers. The entry grid must be the model's (detail::Entries: blocks of m
// consecutive tokens from each document's start, complete ones only, idx counting them from 0 in each document),
// so that no (token, column) is a slot of two entries.
struct DeviceCompressorPool {
  int64_t N = 0, NE = 0;           // tokens, entries
  int64_t m = 0, cdim = 0;         // tokens per block (1 .. kMaxCompressorRatio), channels of an entry
  bool overlap = false;            // CSA (2m slots, W = 2 cdim) or HCA (m slots, W = cdim)
  const int32_t* start = nullptr;  // [NE] global index of the entry's block's first token
  const int32_t* idx = nullptr;    // [NE] block index inside its document (0: no previous block)
  const int32_t* pos = nullptr;    // [N] position of each token inside its document
  int64_t width() const { return (overlap ? 2 : 1) * cdim; }
  int64_t slots() const { return overlap ? 2 * m : m; }
};

// The ape gradient's shared-memory accumulators ([m][32 columns] floats a block) bound m.
constexpr int64_t kMaxCompressorRatio = 384;
// The ape gradient's summation order: per chunk of kApeGradChunkTokens consecutive tokens a partial per (position
// class, column), tokens in increasing order from 0; the partials summed in chunk order from 0; that sum added to
// gape. (tests/cuda/gpu/compressor_cases.hpp replays it on the host.)
constexpr int64_t kApeGradChunkTokens = 256;

// Zx [N, W] += ape[pos[i] % m] (ape [m, W]): one fp32 add per element, the CPU's bits.
void compressor_ape_add(const DeviceCompressorPool& p, const float* ape, float* Zx, cudaStream_t s);

// S [NE, slots, cdim] fully written (a CSA block 0's empty slots 0), pooled [NE, cdim], from Cx and the ape-added
// Zx [N, W]. A thread per (entry, channel): max, exp and sum, normalise and pool, each over the slots in order.
void compressor_pool_forward(const DeviceCompressorPool& p, const float* Cx, const float* Zx, float* S,
                             float* pooled, cudaStream_t s);

// dCx, dZx [N, W] fully written (0 at the (token, column)s no entry reads) from S, pooled of the forward and
// dpooled [NE, cdim].
void compressor_pool_backward(const DeviceCompressorPool& p, const float* Cx, const float* S, const float* pooled,
                              const float* dpooled, float* dCx, float* dZx, cudaStream_t s);

// Device memory the ape gradient takes from `scratch` (released before it returns).
size_t compressor_ape_backward_scratch_bytes(const DeviceCompressorPool& p);
// gape [m, W] += dZx [N, W] summed per position class pos % m (the order above).
void compressor_ape_backward(const DeviceCompressorPool& p, const float* dZx, float* gape, DeviceArena& scratch,
                             cudaStream_t s);

}  // namespace trex::cuda
