// The optimizer step of a (possibly) sharded model, shared by `trex train` and `trex dist-train`: one
// Optimizer per replica region of the local flat buffers (dist/model_shards.hpp), each — with ZeRO-1 — over
// this rank's shard of the region only: the region is cut at tensor boundaries over its replica group
// (dist/zero_shards.hpp), each rank keeps optimizer state for and updates its shard, then an all-gather inside
// the group gives every replica the updated tensors. The global gradient norm counts every element once: each
// rank sums the squares of its shard of every region (the shards of a group partition the region; the regions
// of the world partition the model) and the partial sums are added over the world. One process: one region,
// no group — one Optimizer over the whole buffer, clipped by the plain gradient norm.
// Checkpoints stay canonical (the one-process layout): gather_canonical() assembles full weights and moments on
// the writer; load_state() reads each rank's own slices of the canonical moments (any layout wrote them).
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "dist/model_shards.hpp"
#include "dist/mpi_process_group.hpp"
#include "model/config.hpp"
#include "model/params.hpp"
#include "train/optimizer.hpp"
#include "train/train_step.hpp"

namespace trex::train {

class ShardedOptimizer {
 public:
  // slots: every tensor of the local store at its local offset (optimizer_slots); regions: the store's replica
  // regions (one process: {{0, total, nullptr}}); zero: ZeRO-1 (else every replica updates the whole region);
  // world: where the norm partials and checkpoint pieces travel (nullptr: one process).
  ShardedOptimizer(const model::ParamStore& store, std::vector<TensorSlot> slots,
                   std::vector<dist::ParamRegion> regions, OptimizerConfig cfg, bool zero,
                   dist::MpiProcessGroup* world);

  // Global L2 norm of the (reduced) gradients of the trainable tensors, each element counted once.
  double grad_norm(std::span<const float> grads) const;
  // Clips to `clip` (<= 0: off) given the norm, steps every region's shard at lr, all-gathers the shards.
  // Returns the clip scale (1 = none).
  double update(std::span<float> params, std::span<const float> grads, double norm, double clip, double lr);

  double gather_seconds() const { return gather_seconds_; }  // the last update's all-gathers

  int64_t steps() const;
  void set_steps(int64_t t);
  // Floats of optimizer state this rank holds (AdamW m and v / Muon momentum, as allocated).
  int64_t state_floats() const;
  // Exact resume: this rank's slices of the canonical moments of checkpoint folder `dir`.
  void load_state(const std::filesystem::path& dir, const model::ParamStore& store);

  // Canonical weights and moments (collective over the world). On `root`: store = a full unsharded copy
  // (weights and hash tables) — or nullptr in one process with an unsharded store, which is canonical already —
  // and m, v in the canonical layout (zeros where a tensor keeps no state); elsewhere all empty.
  struct Canonical {
    std::unique_ptr<model::ParamStore> store;
    std::vector<float> m, v;
  };
  Canonical gather_canonical(const model::ParamStore& store, const model::ModelConfig& cfg, int root) const;

 private:
  struct Part {
    dist::ParamRegion region;
    int64_t opt_begin = 0, opt_count = 0;           // the optimizer's range (absolute local offsets)
    std::vector<int64_t> shard_begin, shard_count;  // per group rank (absolute), for the all-gather
    std::unique_ptr<Optimizer> opt;                 // slots rebased to opt_begin
    TensorRanges norm;     // trainable tensors of this rank's shard (absolute): the norm covers each once
    struct Owned {
      int64_t local = 0, canonical = 0, numel = 0, canonical_index = 0;
      size_t tensor = 0;  // index in opt->tensors()
    };
    std::vector<Owned> owned;  // every tensor of this rank's shard: what it contributes to a checkpoint
  };
  std::vector<Part> parts_;
  dist::MpiProcessGroup* world_ = nullptr;
  bool zero_ = true;
  double gather_seconds_ = 0;
};

// One rank's share of a canonical checkpoint: tensors by canonical index, each with its weights and moments (zeros
// for state the tensor does not keep), and the hash tables it holds. Every tensor must come from exactly one rank
// of the world; hash tables may come from several (replicas are identical).
struct CanonicalPieces {
  std::vector<int64_t> index, int_index, ints;
  std::vector<float> floats;  // per tensor: weights, m, v (numel each)
  void add_tensor(int64_t canonical_index, const float* w, const float* m, const float* v, int64_t numel);
  void add_int_tables(const model::ParamStore& store);
};
// Gathers every rank's pieces on root and assembles the full weights and moments there (collective over world;
// nullptr or one rank: the pieces are the whole model). gather_canonical's second half, and the device path's
// under --ep (the trainer).
ShardedOptimizer::Canonical assemble_canonical(const CanonicalPieces& mine, const model::ModelConfig& cfg,
                                               dist::MpiProcessGroup* world, int root);

// Bytes each rank holds in parameters, gradients and optimizer state (all-gathered over the world, nullptr: one
// process). Rank 0 prints one line per rank to stderr prefixed by `who`. Returns, on every rank, the array of
// {"rank", "param_bytes", "grad_bytes", "optimizer_bytes", "total_bytes"}.
nlohmann::json report_memory(const model::ParamStore& store, const ShardedOptimizer& opt,
                             dist::MpiProcessGroup* world, const char* who);

}  // namespace trex::train
