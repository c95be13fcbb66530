// The parameterized problem families (the ten report §7/§8 structures and the later ones of issue 26)
// and their registry. generate() draws a variant (a generator), a size for the difficulty and the
// numbers from the seed, and returns a complete Instance whose lp::Model is built directly in the IR.
// Infeasible or degenerate draws are possible; verify.hpp rejects them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ordata/domains.hpp"
#include "ordata/phrasing.hpp"
#include "ordata/instance.hpp"
#include "ordata/vocab.hpp"

namespace trex::ordata {

Instance generate(Structure structure, Difficulty difficulty, int domain, uint64_t seed);

// Variant names a family can draw (documentation and tests).
std::vector<std::string> family_variants(Structure structure);

// One generator (a variant of a structure): the task family it belongs to (of the 24 of T-Rex's CPT
// engine, issue 26, or "generic") and its formulation in one line.
struct GeneratorInfo {
  std::string variant, task_family, formulation;
};
struct FamilyInfo {
  Structure structure;
  bool classic;                          // one of the ten of the default mix
  std::vector<GeneratorInfo> generators;
  std::vector<std::string> pitfalls;     // CPT rationale pitfalls (classic ones: cpt.cpp)
};
const FamilyInfo& family_info(Structure structure);

namespace detail {
// Shared helpers of the family generators (family_util.cpp).
struct Ctx {
  Rng& rng;
  Difficulty diff;
  const Domain& dom;
  int level() const { return int(diff); }
  // sizes[level] plus a jitter of 0..jitter.
  int size(const int (&sizes)[4], int jitter = 1) { return sizes[level()] + int(rng.uniform_int(0, jitter)); }
  int64_t ri(int64_t lo, int64_t hi) { return rng.uniform_int(lo, hi); }
  double ru(double lo, double hi) { return rng.uniform(lo, hi); }
  std::string org() { return rng.pick(dom.organisations); }
  std::vector<PhraseUse> phrasing;  // the sentence templates drawn through x() (the manifest's diversity counts)
  int narrative = -1;               // the narrative scenario drawn through scenario(); -1: the family has none
  std::string x(const std::string& tmpl) {
    PhraseUse use;
    std::string s = expand(rng, tmpl, use);
    if (use.groups) phrasing.push_back(use);
    return s;
  }
  // Draws one of n narrative scenarios (the same draw as ri(0, n - 1)) and records which.
  int scenario(int n) { return narrative = int(rng.uniform_int(0, n - 1)); }
};
// Euclidean distances (rounded to integers >= 1) between random points on a 100 x 100 grid.
std::vector<double> random_distances(Rng& rng, int n, int m, double scale, double offset);
// Python prologue binding every set and parameter of the instance to a local name (name = key).
std::string python_bindings(const Instance& inst);
std::string label_list(const std::vector<std::string>& labels);  // readable, joined with "and"
// What every generated instance gets after its generator (built-in or family file): buckets, seed, model index.
void finish_instance(Instance& inst, Difficulty difficulty, int domain, uint64_t seed);
// Degree rows of a routing model over locations locs (0 = the depot) with arc binaries xv[i * n + j]: every
// location left and entered once (out_/in_); with vrp the depot is exempt (leave_/visit_ for the customers).
void add_degree_rows(lp::Model& m, const std::vector<int>& xv, const std::vector<std::string>& locs, bool vrp);

Instance make_assignment(Ctx& c);
Instance make_scheduling(Ctx& c);
Instance make_routing(Ctx& c);
Instance make_transportation(Ctx& c);
Instance make_blending(Ctx& c);
Instance make_capacity_planning(Ctx& c);
Instance make_facility_location(Ctx& c);
Instance make_production_planning(Ctx& c);
Instance make_portfolio(Ctx& c);
Instance make_generic(Ctx& c);
Instance make_knapsack(Ctx& c);
Instance make_set_cover(Ctx& c);
Instance make_network_flow(Ctx& c);
Instance make_diet(Ctx& c);
Instance make_unit_commitment(Ctx& c);
Instance make_revenue(Ctx& c);
Instance make_bin_packing(Ctx& c);
Instance make_job_shop(Ctx& c);
Instance make_dispersion(Ctx& c);
Instance make_supply_chain(Ctx& c);
Instance make_marketing(Ctx& c);
Instance make_agriculture(Ctx& c);
Instance make_deployment(Ctx& c);
Instance make_rostering(Ctx& c);
Instance make_routing_flow(Ctx& c);
Instance make_network_design(Ctx& c);
Instance make_location_allocation(Ctx& c);
}  // namespace detail

}  // namespace trex::ordata
