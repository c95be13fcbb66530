// ORGEval-compatible structural equivalence of two LP models (OR_BENCHMARKS.md §6), replicated
// exactly, quirks included: singleton rows to bounds, zero-rhs negations, float32 %.6f colours,
// MD5 Weisfeiler-Lehman refinement, colour-set comparison and the sufficiency test on both graphs.
#pragma once
#include <string>

#include "lp/model.hpp"

namespace trex::lp {

struct EquivalenceResult {
  bool equivalent = false;
  // Which check failed first: "" when equivalent, else "var_num_check", "cons_num_check",
  // "wl_check" or "sufficient_check".
  std::string reason;
  bool var_num_check = false, cons_num_check = false, wl_check = false, sufficient_check = false;
  std::string sufficient_msg;  // e.g. "WL-determinable", "symmetric-decomposable", "Due to distinctness."
  int wl_rounds_ref = 0, wl_rounds_gen = 0;
  // Sufficiency class of each graph ("WL-determinable", "symmetric-decomposable",
  // "Due to distinctness."); empty when the check was not reached.
  std::string sufficiency_ref, sufficiency_gen;
};

// Reference = model 1, generated = model 2, as upstream. Checks run in upstream order and stop at
// the first failure (later flags stay false). Throws trex::Error when both models are empty (no
// graph nodes): upstream's WL loop fails there, so the attempt counts as failed, not as a verdict.
EquivalenceResult check_equivalence(const Model& reference, const Model& generated);

// Sufficiency class of one model against itself: "WL-determinable", "symmetric-decomposable" or
// "not-sufficient" (used for the benchmark self-check statistics).
std::string sufficiency_class(const Model& model);

}  // namespace trex::lp
