// trex::infer::SequenceDecoder: what the generation engine needs of an incremental decoder — sequences opened and
// closed, and steps that feed new tokens to several of them at once — so that the engine runs on the CPU decoder
// (model::Decoder, CpuSequenceDecoder below) or on the GPU's (cuda::Decoder; the trex executable's CUDA builds
// make one, src/cli/cuda_generation.cpp) with the same sampling, stop strings, batching and streaming.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "model/decode.hpp"
#include "model/model.hpp"

namespace trex::infer {

class SequenceDecoder {
 public:
  virtual ~SequenceDecoder() = default;
  virtual std::string device() const = 0;  // "cpu", "cuda"
  // Sequences that can be open at once (the engine waits for a free one beyond it).
  virtual int64_t max_sequences() const = 0;
  // An empty sequence's id (expected_tokens: the most it will hold), or -1 when max_sequences() are open.
  virtual int64_t open(int64_t expected_tokens) = 0;
  virtual void close(int64_t id) = 0;
  // Appends tokens[i] to sequence ids[i]; the logits [ids.size(), vocab] of each one's last new token, valid until
  // the next step. The engine runs one step at a time; open and close may come from other threads meanwhile.
  virtual std::span<const float> step(std::span<const int64_t> ids,
                                      std::span<const std::span<const int32_t>> tokens) = 0;
  // One sequence's step returning the logits of every new token [tokens.size(), vocab] (prompt scoring).
  virtual std::span<const float> step_all_positions(int64_t id, std::span<const int32_t> tokens) = 0;
  // Whether the engine scores prompts (GenOptions::echo) here rather than with the CPU model's full forward: the
  // GPU decoder's answer (a CPU forward of a large model would dominate); the CPU keeps its reference path.
  virtual bool scores_prompts() const { return false; }
};

// model::Decoder over a CPU model (its weights read at every step).
class CpuSequenceDecoder : public SequenceDecoder {
 public:
  explicit CpuSequenceDecoder(model::Model& model) : decoder_(model) {}
  std::string device() const override { return "cpu"; }
  int64_t max_sequences() const override { return std::numeric_limits<int64_t>::max(); }
  int64_t open(int64_t expected_tokens) override;
  void close(int64_t id) override;
  std::span<const float> step(std::span<const int64_t> ids, std::span<const std::span<const int32_t>> tokens) override;
  std::span<const float> step_all_positions(int64_t id, std::span<const int32_t> tokens) override;

 private:
  model::DecodeState& state(int64_t id);
  model::Decoder decoder_;
  std::mutex mu_;  // the map (its nodes do not move: a stepped state's pointer stays valid while others change)
  std::map<int64_t, model::DecodeState> states_;
  int64_t next_id_ = 0;
};

// Makes the decoder of an engine from its loaded CPU model (the host copy of the weights) and context length.
using DecoderFactory = std::function<std::unique_ptr<SequenceDecoder>(model::Model& host, int max_context)>;

}  // namespace trex::infer
