// Training data loader: deterministic batches over a SequenceDataset, sharded per rank for data
// parallelism and resumable from any step. The global batch of step s is samples
// [s*G, (s+1)*G) of an endless stream (G = batch_size * world); stream index g reads sequence
// perm_e[g mod N] with e = g div N and perm_e a seeded shuffle per epoch (Rng::derive(seed, e)).
// Rank r takes rows [r*batch_size, (r+1)*batch_size) of each global batch. The whole state is
// LoaderState {seed, step}: seek(step) continues exactly as an uninterrupted run.
#pragma once
#include <cstdint>
#include <vector>

#include "text/datasets.hpp"
#include "util/jsonl.hpp"

namespace trex::text {

struct LoaderConfig {
  size_t batch_size = 1;  // sequences per rank per step
  int rank = 0, world = 1;
  uint64_t seed = 1234;
  bool shuffle = true;
};

struct LoaderState {
  uint64_t seed = 0, step = 0;
  Json to_json() const { return Json{{"seed", seed}, {"step", step}}; }
  static LoaderState from_json(const Json& j);
};

// Row-major [batch_size, seq_len] arrays, allocated once and reused.
struct Batch {
  size_t batch_size = 0, seq_len = 0;
  std::vector<int32_t> tokens, positions, doc_ids;
  std::vector<uint8_t> loss_mask;
  std::vector<uint64_t> sequence_index;  // dataset index of each row
};

class DataLoader {
 public:
  DataLoader(const SequenceDataset& data, LoaderConfig cfg);
  void next(Batch& batch);  // fills the batch of the current step, then advances
  uint64_t step() const { return step_; }
  uint64_t epoch() const;  // epoch of the current step's first row
  LoaderState state() const { return LoaderState{cfg_.seed, step_}; }
  void restore(const LoaderState& s);  // the seed must match the configuration
  void seek(uint64_t step) { step_ = step; }
  // Dataset index read by (step, rank, row); pure function of the configuration.
  uint64_t sequence_at(uint64_t step, int rank, size_t row) const;

 private:
  const std::vector<uint32_t>& permutation(uint64_t epoch) const;
  const SequenceDataset& data_;
  LoaderConfig cfg_;
  uint64_t step_ = 0;
  mutable uint64_t perm_epoch_ = UINT64_MAX;
  mutable std::vector<uint32_t> perm_;
};

}  // namespace trex::text
