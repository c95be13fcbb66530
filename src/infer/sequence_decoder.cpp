// CpuSequenceDecoder: model::Decoder's states by id (sequence_decoder.hpp).
#include "infer/sequence_decoder.hpp"

#include <vector>

#include "util/error.hpp"

namespace trex::infer {

int64_t CpuSequenceDecoder::open(int64_t expected_tokens) {
  model::DecodeState s = decoder_.new_state(expected_tokens);
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t id = next_id_++;
  states_.emplace(id, std::move(s));
  return id;
}

void CpuSequenceDecoder::close(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (states_.erase(id) == 0) throw Error("decode: close of sequence " + std::to_string(id) + ", which is not open");
}

model::DecodeState& CpuSequenceDecoder::state(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(id);
  if (it == states_.end()) throw Error("decode: sequence " + std::to_string(id) + " is not open");
  return it->second;
}

std::span<const float> CpuSequenceDecoder::step(std::span<const int64_t> ids,
                                                std::span<const std::span<const int32_t>> tokens) {
  std::vector<model::DecodeState*> states;
  for (int64_t id : ids) states.push_back(&state(id));
  return decoder_.step(states, tokens);
}

std::span<const float> CpuSequenceDecoder::step_all_positions(int64_t id, std::span<const int32_t> tokens) {
  return decoder_.step(state(id), tokens, true);
}

}  // namespace trex::infer
