// trex::cuda::Decoder: incremental (cached) inference on the GPU model, model::Decoder's twin. The caches of every
// sequence live on the device in row pools allocated once at construction (model/decode_plan.hpp: the sliding-window
// key rings, the compressors' pending rows, the compressed entries, the indexer's keys), for a fixed number of
// sequences of a fixed length; a sequence is a slot (open / close). A step feeds any number of new tokens to any number
// of open sequences, as one batch of rows: the per-row parts (mHC, norms, projections, MoE, head) are the GPU model's
// components, attention runs as the training kernels over the plan's lists (the compressor pooling of the entries the
// step completes, the indexer's scores and top-k, the joint softmax over window + entries + sink). The logits come back
// to the host.
//
// The CPU's model::Decoder is the oracle (compare_decode in tests/cuda/gpu/model_parity.cpp, CudaDecoder.*: every
// position's logits for prefill chunks, batched single tokens and reused slots). Weights: read from the cuda::Model at
// every step (upload first). Decoding is a forward only: the model's gradients, its activation arena and its expert
// loads are not touched. CUDA builds only.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cuda/gpu_model.hpp"
#include "model/decode_plan.hpp"

namespace trex::cuda {

struct DecoderOptions {
  int64_t sequences = 8;    // open sequences at once
  int64_t tokens = 2048;    // tokens per sequence (prompt and generation)
  int64_t rows = 0;         // new tokens per step (0: `tokens`, so that a whole prompt is one step)
  size_t activation_bytes = 0;  // the step arena; 0: 85 % of the device memory free after the caches
};

class Decoder {
 public:
  // Allocates the caches and the step arena; throws trex::Error (with the sizes) when they do not fit, or when the
  // config is a training stage the decoder does not implement (the indexer's dense warm-up).
  Decoder(Model& model, const DecoderOptions& opt = {});
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  const model::DecodeCapacity& capacity() const;
  size_t cache_bytes() const;

  // A free slot (its sequence empty), or -1 when every slot is open.
  int64_t open();
  void close(int64_t slot);
  int64_t length(int64_t slot) const;  // tokens the open sequence holds

  // Appends tokens[i] (at least one each) to the open sequences slots[i] and returns the logits (host), valid until
  // the next call: [slots.size(), vocab] of each sequence's last new token, or with all_positions [sum of the
  // counts, vocab]. Token ids outside the vocabulary, closed slots and steps past the capacity are a trex::Error
  // before anything changes.
  std::span<const float> step(std::span<const int64_t> slots, std::span<const std::span<const int32_t>> tokens,
                              bool all_positions = false);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace trex::cuda
