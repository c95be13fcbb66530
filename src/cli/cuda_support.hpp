// What this trex executable can run on CUDA, in builds that carry the GPU model (CUDA found at configure time:
// src/cli/CMakeLists.txt defines TREX_HAVE_CUDA_MODEL): the trainer (train, run's training stages) and the
// incremental decoder of generate and serve (cuda_generation.cpp).
#pragma once

#include <string>

#include "infer/sequence_decoder.hpp"

namespace trex::cli {

#if TREX_HAVE_CUDA_MODEL
inline constexpr bool kTrainsOnCuda = true;
inline constexpr bool kGeneratesOnCuda = true;
// The engine's decoder on the first CUDA device: the GPU model with the loaded weights copied once, fp32 or bf16
// products (bf16: operands rounded, fp32 accumulation), caches for `sequences` open sequences of the engine's
// context length.
infer::DecoderFactory cuda_decoder_factory(int sequences, bool bf16);
#else
inline constexpr bool kTrainsOnCuda = false;
inline constexpr bool kGeneratesOnCuda = false;
#endif

// `--matmul fp32|bf16` of generate and serve: bf16 is the GPU decoder's (the CPU decoder's products are fp32);
// checked before anything is read. Returns whether bf16 was asked for.
bool decoder_matmul_is_bf16(const std::string& matmul, bool cuda, const std::string& command);

}  // namespace trex::cli
