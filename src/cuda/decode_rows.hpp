// The GPU decoder's list moves (gpu_decode.hpp, model/decode_plan.hpp): row copies through index lists between
// the cache pools and the step's buffers, and the append of the indexer's selection to each row's key list.
// Device pointers, queued on a stream; no arithmetic, so the CPU replay of the plan (tests/model/
// decode_plan_test.cpp) is their oracle. CUDA builds only (decode_rows.cu).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace trex::cuda {

// dst[(dst_rows ? dst_rows[i] : i) * width + j] = src[(src_rows ? src_rows[i] : i) * width + j] for i < n,
// j < width. The rows read and the rows written must not overlap (the decoder's never do: staging rows are read,
// ring or entry rows written). A block per row.
void copy_rows(const float* src, const int32_t* src_rows, float* dst, const int32_t* dst_rows, int64_t n,
               int64_t width, cudaStream_t s);

// comp[r * cmax + nold[r] + j] = sel[r * k + j] for j < min(k, nvis[r]), r < rows: a CSA row's top-k after its
// older window keys (decode_plan.hpp; nold[r] + k <= cmax).
void append_selection(int32_t* comp, int64_t cmax, const int32_t* nold, const int32_t* sel, int64_t k,
                      const int32_t* nvis, int64_t rows, cudaStream_t s);

}  // namespace trex::cuda
