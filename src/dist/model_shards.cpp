// Model sharding: placement of tensors on ranks and the replica groups' communicators (see model_shards.hpp).
#include "dist/model_shards.hpp"

#include <string>

#include "dist/mpi_runtime.hpp"
#include "util/error.hpp"

namespace trex::dist {

model::ParamPlacement make_placement(const model::ModelConfig& cfg, const Layout& l, const RankCoords& c,
                                     const StagePlan& plan) {
  if (plan.stages() != l.pp) throw Error("make_placement: the stage plan has the wrong number of stages");
  const int64_t first = plan.first[size_t(c.pp)], end = plan.first[size_t(c.pp) + 1];
  const bool first_stage = c.pp == 0, last_stage = c.pp == l.pp - 1;
  const bool mtp = cfg.num_nextn_predict_layers > 0;
  const int64_t per_rank = cfg.n_routed_experts / l.ep;
  const int ep = l.ep, my_ep = c.ep, pp = l.pp;
  return [=](const std::string& name) -> int {
    bool held = false;
    if (name.rfind("layers.", 0) == 0) {
      const int64_t layer = std::stoll(name.substr(7, name.find('.', 7) - 7));
      held = layer >= first && layer < end;
    } else if (name.rfind("mtp.", 0) == 0) {
      held = last_stage;
    } else if (name == "embed.weight") {
      if (!(first_stage || (last_stage && mtp))) return -1;
      return pp > 1 && mtp ? kEmbedGroup : kStageGroup;
    } else {
      held = last_stage;  // head, final norm, head collapse
    }
    if (!held) return -1;
    const auto at = name.find(".ffn.experts.");
    if (at == std::string::npos || ep == 1) return kStageGroup;
    const int64_t e = std::stoll(name.substr(at + 13, name.find('.', at + 13) - at - 13));
    return e / per_rank == my_ep ? kExpertGroup : -1;
  };
}

ReplicaGroups::ReplicaGroups(const Layout& l, const RankCoords& c) : groups_(kReplicaGroups) {
  auto make = [&](int id, int color, int key) {
    MPI_Comm comm = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split(MPI_COMM_WORLD, color, key, &comm), "Comm_split");
    if (comm == MPI_COMM_NULL) return;
    groups_[size_t(id)] = std::make_unique<MpiProcessGroup>(comm);
    MPI_Comm_free(&comm);
  };
  const int data_index = c.dp * l.ep + c.ep;
  make(kStageGroup, c.pp, data_index);
  make(kExpertGroup, c.pp * l.ep + c.ep, c.dp);
  const bool embed = l.pp > 1 && (c.pp == 0 || c.pp == l.pp - 1);
  make(kEmbedGroup, embed ? 0 : MPI_UNDEFINED, c.pp * l.dp * l.ep + data_index);
}

std::vector<model::ParamInfo> region_tensors(const std::vector<model::ParamInfo>& table, const ParamRegion& r) {
  std::vector<model::ParamInfo> sub;
  for (const auto& p : table)
    if (p.offset >= r.begin && p.offset < r.end) {
      sub.push_back(p);
      sub.back().offset -= r.begin;
    }
  return sub;
}

std::vector<ParamRegion> ReplicaGroups::regions(const model::ParamStore& store) const {
  std::vector<ParamRegion> out;
  const auto& ranges = store.group_ranges();
  for (size_t g = 0; g < ranges.size(); ++g) {
    if (ranges[g].second == ranges[g].first) continue;
    if (g >= groups_.size() || !groups_[g])
      throw Error("internal: this rank holds tensors of replica group " + std::to_string(g) +
                  " but is not in its communicator");
    MpiProcessGroup* pg = groups_[g].get();
    out.push_back({ranges[g].first, ranges[g].second, pg->size() > 1 ? pg : nullptr, int(g)});
  }
  return out;
}

}  // namespace trex::dist
