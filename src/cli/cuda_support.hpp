// What this trex executable can run on CUDA, in builds that carry the GPU model (CUDA found at configure time:
// src/cli/CMakeLists.txt defines TREX_HAVE_CUDA_MODEL): the trainer (train, run's training stages) and the
// incremental decoder of generate and serve (cuda_generation.cpp).
#pragma once

#include "infer/sequence_decoder.hpp"

namespace trex::cli {

#if TREX_HAVE_CUDA_MODEL
inline constexpr bool kTrainsOnCuda = true;
inline constexpr bool kGeneratesOnCuda = true;
// The engine's decoder on the first CUDA device: the GPU model with the loaded weights copied once, fp32
// products, caches for `sequences` open sequences of the engine's context length.
infer::DecoderFactory cuda_decoder_factory(int sequences);
#else
inline constexpr bool kTrainsOnCuda = false;
inline constexpr bool kGeneratesOnCuda = false;
#endif

}  // namespace trex::cli
