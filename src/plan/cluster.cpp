// Cluster presets (PLANNER_AND_TUNER.md §A1/§A2 and MACHINE.md), the JSON reader and the tier lookup.
#include "plan/cluster.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <utility>

#include "util/error.hpp"
#include "util/jsonl.hpp"

namespace trex::plan {

namespace {

constexpr long kWhole = std::numeric_limits<long>::max();

Cluster cm384() {
  // One rank = one Ascend 910C die, as in the T-Rex launchers (16 ranks per node). UB spans the 768 dies of a
  // CloudMatrix384 at near intra-node bandwidth; the all-to-all rate is DeepEP-Ascend's measured EP64 bottleneck
  // bandwidth (81–102 GB/s dispatch/combine). The host link per die is an assumption (PCIe 5 x16 per chip, halved).
  Cluster c;
  c.name = "cm384";
  c.device = "Ascend 910C die (CloudMatrix384)";
  c.peak_tflops = 376;
  c.hbm_gb = 64;
  c.hbm_gbps = 1600;
  c.reserve_gb = 4;
  c.host_gbps = 32;
  c.tiers = {{"ub", 768, 196, 85, 2}, {"roce", kWhole, 25, 20, 10}};
  c.eff_dense = 0.55;
  c.eff_expert = 0.5;
  c.eff_attention = 0.25;  // the report: sparse attention is memory- and control-bound
  return c;
}

Cluster nvidia(const std::string& name, const std::string& device, double hbm_gb, double hbm_gbps,
               double nvlink_gbps) {
  Cluster c;
  c.name = name;
  c.device = device;
  c.peak_tflops = 989;
  c.hbm_gb = hbm_gb;
  c.hbm_gbps = hbm_gbps;
  c.reserve_gb = 4;
  c.host_gbps = 25;
  c.tiers = {{"nvlink", 8, nvlink_gbps, nvlink_gbps, 3}, {"ib", kWhole, 50, 40, 10}};
  return c;
}

Cluster cpu2() {
  // This machine (MACHINE.md): one rank per core of the 2-core host; FP32 peak 433 GFLOP/s for both cores;
  // np 2 Allreduce of 4 MiB 0.58–0.68 ms (busbw ≈ 6.8 GB/s), Alltoallv 21–25 GB/s sent per rank; triad
  // 31 GB/s with one thread. Memory: the 23 GiB this VM has.
  Cluster c;
  c.name = "cpu2";
  c.device = "CPU core (2-core host, FP32)";
  c.peak_tflops = 0.2165;
  c.hbm_gb = 12;
  c.hbm_gbps = 31;
  c.reserve_gb = 1;
  c.host_gbps = 31;
  c.tiers = {{"shm", kWhole, 6.8, 21, 30}};
  c.eff_dense = 0.45;
  c.eff_expert = 0.35;
  c.eff_attention = 0.15;
  c.expert_half_rows = 32;
  c.overlap_dp = 0.5;
  c.overlap_ep = 0.0;
  return c;
}

// The cluster's numeric fields by their JSON names, in file order: the reader and the writer share this list.
constexpr std::pair<const char*, double Cluster::*> kNumberFields[] = {
    {"peak_tflops", &Cluster::peak_tflops},
    {"hbm_gb", &Cluster::hbm_gb},
    {"hbm_gbps", &Cluster::hbm_gbps},
    {"reserve_gb", &Cluster::reserve_gb},
    {"host_gbps", &Cluster::host_gbps},
    {"eff_dense", &Cluster::eff_dense},
    {"eff_expert", &Cluster::eff_expert},
    {"eff_attention", &Cluster::eff_attention},
    {"expert_half_rows", &Cluster::expert_half_rows},
    {"overlap_dp", &Cluster::overlap_dp},
    {"overlap_ep", &Cluster::overlap_ep},
    {"overlap_swap", &Cluster::overlap_swap},
};

double number(const nlohmann::json& j, const char* key, double fallback, const std::string& source) {
  if (!j.contains(key)) return fallback;
  const auto& v = j.at(key);
  if (!v.is_number()) throw Error(fmt::format("{}: field '{}' must be a number", source, key));
  return v.get<double>();
}

}  // namespace

const Tier& Cluster::tier_for(long group_ranks) const {
  for (const auto& t : tiers)
    if (group_ranks <= t.ranks) return t;
  return tiers.back();
}

void Cluster::validate() const {
  auto positive = [&](double v, const char* field) {
    if (!(v > 0) || !std::isfinite(v))
      throw Error(fmt::format("cluster '{}': {} must be a positive number (got {})", name, field, v));
  };
  positive(peak_tflops, "peak_tflops");
  positive(hbm_gb, "hbm_gb");
  positive(hbm_gbps, "hbm_gbps");
  positive(host_gbps, "host_gbps");
  if (reserve_gb < 0 || reserve_gb >= hbm_gb)
    throw Error(fmt::format("cluster '{}': reserve_gb must be in [0, hbm_gb)", name));
  for (double f : {eff_dense, eff_expert, eff_attention})
    if (!(f > 0 && f <= 1)) throw Error(fmt::format("cluster '{}': efficiencies must be in (0, 1]", name));
  for (double f : {overlap_dp, overlap_ep, overlap_swap})
    if (!(f >= 0 && f <= 1)) throw Error(fmt::format("cluster '{}': overlap factors must be in [0, 1]", name));
  positive(expert_half_rows, "expert_half_rows");
  if (tiers.empty()) throw Error(fmt::format("cluster '{}': needs at least one tier", name));
  long prev = 0;
  for (const auto& t : tiers) {
    if (t.ranks <= prev)
      throw Error(fmt::format("cluster '{}': tier '{}' must span more ranks than the tier before it", name, t.name));
    positive(t.gbps, "tier gbps");
    positive(t.a2a_gbps, "tier a2a_gbps");
    if (t.latency_us < 0) throw Error(fmt::format("cluster '{}': tier '{}' latency_us < 0", name, t.name));
    prev = t.ranks;
  }
}

std::vector<std::string> cluster_preset_names() { return {"cm384", "a100", "h800", "h100", "h200", "cpu2"}; }

Cluster cluster_preset(const std::string& name) {
  if (name == "cm384") return cm384();
  // H800: NVLink 400 GB/s total, ≈160 GB/s achieved per DeepSeek-V3; IB 50 GB/s.
  if (name == "h800") return nvidia("h800", "NVIDIA H800 SXM", 80, 3350, 160);
  if (name == "a100") {  // PTD-P's machine: NVLink3 300 GB/s per direction, 8 x HDR 200 Gb/s per 8-GPU node
    Cluster c = nvidia("a100", "NVIDIA A100 80GB SXM", 80, 2039, 300);
    c.peak_tflops = 312;
    c.tiers.back().gbps = c.tiers.back().a2a_gbps = 25;
    return c;
  }
  if (name == "h100") return nvidia("h100", "NVIDIA H100 SXM", 80, 3350, 450);
  if (name == "h200") return nvidia("h200", "NVIDIA H200 SXM", 141, 4800, 450);
  if (name == "cpu2") return cpu2();
  std::string names;
  for (const auto& n : cluster_preset_names()) names += (names.empty() ? "" : ", ") + n;
  throw Error(fmt::format("unknown cluster '{}' (presets: {}; or a JSON file)", name, names));
}

Cluster cluster_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source + ": a cluster must be a JSON object");
  Cluster c;
  if (j.contains("base")) {
    if (!j.at("base").is_string()) throw Error(source + ": field 'base' must be a preset name");
    c = cluster_preset(j.at("base").get<std::string>());
  }
  if (j.contains("name")) c.name = j.at("name").get<std::string>();
  if (c.name.empty()) c.name = source;
  if (j.contains("device")) c.device = j.at("device").get<std::string>();
  for (const auto& [key, field] : kNumberFields) c.*field = number(j, key, c.*field, source);
  if (j.contains("tiers")) {
    const auto& ts = j.at("tiers");
    if (!ts.is_array()) throw Error(source + ": field 'tiers' must be an array");
    c.tiers.clear();
    for (size_t i = 0; i < ts.size(); ++i) {
      const auto& t = ts[i];
      const std::string where = fmt::format("{}: tiers[{}]", source, i);
      if (!t.is_object() || !t.contains("name") || !t.at("name").is_string())
        throw Error(where + ": needs a string 'name'");
      Tier tier;
      tier.name = t.at("name").get<std::string>();
      const double ranks = number(t, "ranks", 0, where);  // 0 or absent: the whole cluster
      tier.ranks = ranks <= 0 || i + 1 == ts.size() ? kWhole : static_cast<long>(ranks);
      tier.gbps = number(t, "gbps", 0, where);
      tier.a2a_gbps = number(t, "a2a_gbps", tier.gbps, where);
      tier.latency_us = number(t, "latency_us", 0, where);
      c.tiers.push_back(tier);
    }
  }
  c.validate();
  return c;
}

Cluster load_cluster(const std::string& name_or_path) {
  for (const auto& n : cluster_preset_names())
    if (n == name_or_path) return cluster_preset(n);
  if (!std::filesystem::exists(name_or_path)) return cluster_preset(name_or_path);  // lists the presets
  try {
    return cluster_from_json(parse_json_file(name_or_path), name_or_path);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: {}", name_or_path, e.what()));
  }
}

nlohmann::ordered_json cluster_to_json(const Cluster& c) {
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["device"] = c.device;
  for (const auto& [key, field] : kNumberFields) j[key] = c.*field;
  auto tiers = nlohmann::ordered_json::array();
  for (const auto& t : c.tiers) {
    nlohmann::ordered_json tj;
    tj["name"] = t.name;
    if (t.ranks != kWhole) tj["ranks"] = t.ranks;
    tj["gbps"] = t.gbps;
    tj["a2a_gbps"] = t.a2a_gbps;
    tj["latency_us"] = t.latency_us;
    tiers.push_back(tj);
  }
  j["tiers"] = tiers;
  return j;
}

}  // namespace trex::plan
