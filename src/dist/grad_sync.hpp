// Data-parallel gradient synchronisation in buckets (≤ 16 MiB, MACHINE.md §4). Buckets follow the order in
// which backward finalises gradients: layer L-1 first (together with the MTP module, the heads and the final
// norm, which backward finishes before it), down to layer 0, the embedding last. With overlap on, the model's
// backward hook starts each bucket's MPI_Iallreduce as soon as its layer is done and calls MPI_Test on the ones
// in flight (Open MPI has no asynchronous progress); finish() starts the rest, waits, and averages. With
// overlap off, finish() runs blocking MPI_Allreduce per bucket after backward (the reference path).
// Under model sharding (model_shards.hpp) the local buffer is cut into replica regions, each reduced over its
// own communicator: the buckets are planned per region, carry their region's communicator, and start in
// (ready event, region) order — the same order on every rank of a communicator.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "dist/model_shards.hpp"
#include "dist/mpi_process_group.hpp"
#include "model/model.hpp"

namespace trex::dist {

struct GradBucket {
  int64_t begin = 0, end = 0;  // float range of the flat gradient buffer
  int event = 0;               // ready after backward event `event` (0 = block L-1 done ... L-1 = block 0 done,
                               // L = end of backward)
  MPI_Comm comm = MPI_COMM_NULL;  // the replica region's communicator (null: nothing to reduce)
};

// Splits the flat buffer into buckets of at most max_floats, grouped by ready event, sorted by event.
// Every float of [0, total) is in exactly one bucket.
std::vector<GradBucket> plan_grad_buckets(const std::vector<model::ParamInfo>& table, int64_t n_layers,
                                          int64_t total, int64_t max_floats = kMaxMessageFloats);

struct GradSyncStats {
  double exposed_seconds = 0;  // time spent inside this object (hook work + final wait): communication the
                               // compute did not hide
  int64_t buckets = 0, tests = 0;
};

class GradSync {
 public:
  // average_over: the sum is divided by this (0: the group size). One replicated model over `pg`.
  GradSync(MpiProcessGroup& pg, model::Model& model, bool overlap, int64_t max_bucket_floats = kMaxMessageFloats,
           int average_over = 0);
  // Sharded model: each region's gradients are summed over its replica group, then everything is divided by
  // average_over = dp*ep (only the data ranks see different rows; see model_shards.hpp).
  GradSync(const std::vector<ParamRegion>& regions, model::Model& model, bool overlap, int64_t max_bucket_floats,
           int average_over);
  ~GradSync();
  GradSync(const GradSync&) = delete;
  GradSync& operator=(const GradSync&) = delete;

  // Arms the backward hook for the next forward_backward (call it before the LAST micro-batch of a step).
  void arm();
  // Completes every bucket's all-reduce and divides by average_over. Returns this step's stats.
  GradSyncStats finish();
  const std::vector<GradBucket>& buckets() const { return buckets_; }

 private:
  void on_block_done(int64_t block);
  void start_ready(int event);
  void progress();

  model::Model& model_;
  bool overlap_;
  int average_over_;
  bool any_comm_ = false;
  std::vector<GradBucket> buckets_;
  std::vector<MPI_Request> requests_;
  size_t next_ = 0;  // first bucket not started
  bool armed_ = false;
  GradSyncStats stats_;
};

}  // namespace trex::dist
