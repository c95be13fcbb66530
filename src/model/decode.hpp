// trex::model::Decoder: incremental (cached) inference for the DeepSeek-V4-style model. Each sequence keeps a
// DecodeState: per layer, the sliding-window KV ring (the last `sliding_window` post-RoPE K == V vectors), the
// compressed entries of CSA/HCA layers with the compressors' pending tail (the projected rows of the current,
// incomplete block and, for the overlapping CSA compressor, of the block before it: an entry appears only when
// its block completes), and the lightning indexer's compressed keys. A step feeds any number of new tokens to
// any number of sequences at once (prefill: many tokens; decode: one per sequence); the per-token work runs as
// one batch of GEMMs over every row, attention runs per sequence against its caches.
//
// The full-sequence forward (Model::forward) is the oracle: feeding a sequence in any chunking reproduces its
// logits at every position (tests/model/decode_test.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/model.hpp"

namespace trex::model {

class Decoder;

// The caches of one sequence. Create with Decoder::new_state; feed with Decoder::step.
class DecodeState {
 public:
  DecodeState();
  ~DecodeState();
  DecodeState(DecodeState&&) noexcept;
  DecodeState& operator=(DecodeState&&) noexcept;

  int64_t length() const { return length_; }  // tokens consumed so far
  size_t cache_bytes() const;                  // memory held by the caches
  void clear();                                // forget the sequence, keep the memory

  struct Layer;

 private:
  friend class Decoder;
  std::vector<Layer> layers_;
  int64_t length_ = 0;
};

class Decoder {
 public:
  // Reads the model's parameters at every step (weights may change between steps, e.g. after training).
  explicit Decoder(Model& model);
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // A fresh state; `expected_tokens` (optional) reserves the compressed-entry caches up front.
  DecodeState new_state(int64_t expected_tokens = 0) const;

  // Appends tokens[i] (at least one token each) to states[i] and returns logits, valid until the next call:
  // all_positions == false: [states.size(), vocab], the last new token of each sequence;
  // all_positions == true:  [sum of tokens[i].size(), vocab], every new token, sequence by sequence.
  // Token ids outside the vocabulary are a trex::Error (states are left unchanged).
  std::span<const float> step(std::span<DecodeState* const> states, std::span<const std::span<const int32_t>> tokens,
                              bool all_positions = false);

  // Convenience: one sequence.
  std::span<const float> step(DecodeState& state, std::span<const int32_t> tokens, bool all_positions = false);

  struct Impl;

 private:
  Model& model_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trex::model
