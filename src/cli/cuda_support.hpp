// What this trex executable can run on CUDA, in builds that carry the GPU model (CUDA found at configure time:
// src/cli/CMakeLists.txt defines TREX_HAVE_CUDA_MODEL): the trainer (train, run's training stages) and the
// incremental decoder of generate and serve (cuda_generation.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "infer/sequence_decoder.hpp"

namespace trex::cli {

#if TREX_HAVE_CUDA_MODEL
inline constexpr bool kTrainsOnCuda = true;
inline constexpr bool kGeneratesOnCuda = true;
#else
inline constexpr bool kTrainsOnCuda = false;
inline constexpr bool kGeneratesOnCuda = false;
#endif

// `--device cpu|cuda` and `--matmul fp32|bf16` of generate and serve.
void add_decoder_options(CLI::App& sub, std::string& device, std::string& matmul);
// Those options checked (call it before anything is read or bound: no usable device, or bf16 products for the CPU
// decoder, are a trex::Error with the reason), and the engine's decoder factory they ask for: empty for the CPU
// decoder; for cuda the GPU decoder on the first device — the loaded weights copied once into the GPU model, fp32
// or bf16 products (operands rounded, fp32 accumulation), caches for `sequences` open sequences of the engine's
// context length.
infer::DecoderFactory checked_decoder_factory(const std::string& device, const std::string& matmul, int sequences,
                                              const std::string& command);

}  // namespace trex::cli
