// plan::Cluster: what the parallelism planner knows about a machine — one rank's device (dense peak,
// memory, memory bandwidth, host link) and the network tiers a process group can span, fastest first —
// plus the efficiency and overlap factors the cost model applies. Presets for the machines of
// PLANNER_AND_TUNER.md §A1 (CloudMatrix384 910C dies, H800, H100, H200) and this 2-core CPU host; any other
// machine is a JSON file with the same fields (docs/plan.md).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trex::plan {

// One network level: a process group whose ranks all sit inside one domain of `ranks` consecutive ranks
// communicates at this level's bandwidth (per rank, per direction).
struct Tier {
  std::string name;
  long ranks = 0;            // domain size in ranks; the last tier spans the whole cluster (any size)
  double gbps = 0;           // GB/s per rank per direction (ring collectives, p2p)
  double a2a_gbps = 0;       // GB/s per rank for all-to-all dispatch/combine (measured bottleneck rates)
  double latency_us = 0;     // per collective step (the α of the α–β model)
};

struct Cluster {
  std::string name, device;
  double peak_tflops = 0;    // dense peak of the training matmul dtype, per rank
  double hbm_gb = 0;         // device memory per rank (GB = 1e9 bytes)
  double hbm_gbps = 0;       // device memory bandwidth per rank
  double reserve_gb = 0;     // kept free: fragmentation, communication buffers
  double host_gbps = 0;      // device <-> host per rank (optimizer swap)
  std::vector<Tier> tiers;   // fastest first
  // Fraction of peak reached by each op class (calibrated per machine, never assumed equal to 1).
  double eff_dense = 0.6, eff_expert = 0.5, eff_attention = 0.3;
  double expert_half_rows = 128;  // grouped GEMM reaches half of eff_expert at this many rows per expert
  // Fraction of each communication hidden behind compute by the schedule.
  double overlap_dp = 0.8, overlap_ep = 0.5, overlap_swap = 0.5;

  // The fastest tier whose domain holds a group of `group_ranks` consecutive ranks.
  const Tier& tier_for(long group_ranks) const;
  void validate() const;  // throws trex::Error naming the bad field
};

std::vector<std::string> cluster_preset_names();
Cluster cluster_preset(const std::string& name);  // throws trex::Error listing the presets
// A preset name, or a JSON file: {"name", "device", "peak_tflops", "hbm_gb", ..., "tiers": [{...}]}.
Cluster load_cluster(const std::string& name_or_path);
Cluster cluster_from_json(const nlohmann::json& j, const std::string& source);
nlohmann::ordered_json cluster_to_json(const Cluster& c);

}  // namespace trex::plan
