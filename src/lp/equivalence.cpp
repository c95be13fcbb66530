// check_equivalence / sufficiency_class: ORGEval's decision (OR_BENCHMARKS.md §6) composed from the
// stages in equivalence_detail.hpp: counts, WL colour sets, sufficiency of both graphs.
#include "lp/equivalence.hpp"

#include <algorithm>

#include "lp/equivalence_detail.hpp"
#include "util/error.hpp"

namespace trex::lp {

using namespace orgeval;

static std::vector<std::string> sorted_colour_set(const Colouring& c) {
  std::vector<std::string> s = c.class_colour;  // one string per class: already a set
  std::sort(s.begin(), s.end());
  return s;
}

EquivalenceResult check_equivalence(const Model& reference, const Model& generated) {
  CheckModel m1 = gurobi_view(reference), m2 = gurobi_view(generated);
  normalize(m1);
  normalize(m2);

  EquivalenceResult res;
  res.var_num_check = m1.vars.size() == m2.vars.size();
  if (!res.var_num_check) {
    res.reason = "var_num_check";
    return res;
  }
  res.cons_num_check = m1.rows.size() == m2.rows.size();
  if (!res.cons_num_check) {
    res.reason = "cons_num_check";
    return res;
  }

  const Graph g1 = build_graph(m1), g2 = build_graph(m2);
  if (g1.num_nodes() == 0)
    throw Error("ORGEval check: both models have no variables and no linear rows (upstream's WL refinement "
                "fails on an empty graph, so the attempt fails)");
  thread_local WlRefiner refiner;
  const Colouring c1 = refiner.refine(g1), c2 = refiner.refine(g2);
  res.wl_rounds_ref = c1.rounds;
  res.wl_rounds_gen = c2.rounds;
  res.wl_check = sorted_colour_set(c1) == sorted_colour_set(c2);
  if (!res.wl_check) {
    res.reason = "wl_check";
    return res;
  }

  res.sufficiency_ref = sufficiency(g1, c1);
  res.sufficiency_gen = sufficiency(g2, c2);
  const bool ok1 = res.sufficiency_ref != kDueToDistinctness, ok2 = res.sufficiency_gen != kDueToDistinctness;
  res.sufficient_check = ok1 && ok2;
  if (!res.sufficient_check) {
    res.sufficient_msg = std::string(kDueToDistinctness);
    res.reason = "sufficient_check";
    return res;
  }
  res.sufficient_msg = res.sufficiency_ref == res.sufficiency_gen
                           ? res.sufficiency_ref
                           : res.sufficiency_ref + " / " + res.sufficiency_gen;
  res.equivalent = true;
  return res;
}

std::string sufficiency_class(const Model& model) {
  CheckModel m = gurobi_view(model);
  normalize(m);
  const Graph g = build_graph(m);
  if (g.num_nodes() == 0) throw Error("ORGEval check: the model has no variables and no linear rows");
  thread_local WlRefiner refiner;
  const std::string s = sufficiency(g, refiner.refine(g));
  return s == kDueToDistinctness ? "not-sufficient" : s;
}

}  // namespace trex::lp
