// CPT documents (report §7 step 09): from one verified instance, either a model report (problem,
// formulation, LP file, code, solver result) or a modelling rationale (why each decision, pitfalls,
// code). Plain text with Markdown headings; no chat markers; prose numbers rounded to 2 decimals.
#pragma once
#include <string>

#include "ordata/render.hpp"
#include "ordata/verify.hpp"

namespace trex::ordata {

enum class CptKind { ModelReport, ModelingRationale };
const char* to_string(CptKind k);  // "model_report", "modeling_rationale"

std::string cpt_document(const Instance& inst, const Verification& v, const RenderedProblem& problem, CptKind kind, Rng& rng);

}  // namespace trex::ordata
