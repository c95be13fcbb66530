// Model sharding over a DP x EP x PP layout: which tensors a rank holds and the communicators over which each
// tensor's replicas meet. A rank holds its pipeline stage's layers (the whole model when pp = 1), the embedding
// on the first stage and — when MTP modules read it — on the last, the head, final norm, head collapse and MTP
// modules on the last stage; under ep > 1 only its own routed experts (rank j of an expert group: experts
// [j*E/ep, (j+1)*E/ep)). Replica groups (ParamStore groups, one contiguous range of the local buffers each):
//   0 (stage)   every tensor but the two below: replicated over the dp*ep ranks of the stage;
//   1 (experts) routed experts when ep > 1: replicated over the dp ranks of the same stage and expert shard;
//   2 (embed)   the embedding when pp > 1 and MTP is on: held by the dp*ep ranks of the first AND the last
//               stage, whose gradients (input embedding + MTP's embedding use) are summed across the two.
// Every group's gradient sum is divided by dp*ep (each data rank's loss is scaled so that the mean over the
// data ranks is the one-process loss), which gives the one-process gradient for every tensor.
#pragma once
#include <memory>
#include <vector>

#include "dist/layout.hpp"
#include "dist/mpi_process_group.hpp"
#include "dist/stage_plan.hpp"
#include "model/config.hpp"
#include "model/params.hpp"

namespace trex::dist {

enum ReplicaGroupId : int { kStageGroup = 0, kExpertGroup = 1, kEmbedGroup = 2, kReplicaGroups = 3 };

// The placement of rank `c` (pass to model::Model). Layout (1,1,1): everything, group 0.
model::ParamPlacement make_placement(const model::ModelConfig& cfg, const Layout& l, const RankCoords& c,
                                     const StagePlan& plan);

// A contiguous range of the local flat buffers whose tensors share one replica group.
struct ParamRegion {
  int64_t begin = 0, end = 0;
  MpiProcessGroup* group = nullptr;  // the replicas' communicator (nullptr: this rank holds the only replica)
  int id = 0;                        // ReplicaGroupId
};

// The tensors of `table` inside region r, their offsets relative to r.begin (what a per-region plan — gradient
// buckets, ZeRO shards — works on).
std::vector<model::ParamInfo> region_tensors(const std::vector<model::ParamInfo>& table, const ParamRegion& r);

// The replica groups' communicators of this rank (collective over MPI_COMM_WORLD: every rank constructs it).
class ReplicaGroups {
 public:
  ReplicaGroups(const Layout& l, const RankCoords& c);
  // nullptr when this rank is in no such group (group 2 off the first and last stage).
  MpiProcessGroup* group(int id) const { return groups_[size_t(id)].get(); }
  // The non-empty replica regions of `store` (built with make_placement for the same layout and rank).
  std::vector<ParamRegion> regions(const model::ParamStore& store) const;

 private:
  std::vector<std::unique_ptr<MpiProcessGroup>> groups_;
};

}  // namespace trex::dist
