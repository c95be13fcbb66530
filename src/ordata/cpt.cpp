// Model reports and modelling rationales.
#include "ordata/cpt.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "ordata/answers.hpp"
#include "ordata/domains.hpp"
#include "ordata/families.hpp"
#include "ordata/phrasing.hpp"

namespace trex::ordata {

namespace {

std::vector<std::string> pitfalls(Structure s) {
  switch (s) {
    case Structure::Assignment: return {"Each agent and each job needs its own row; forgetting one side lets a job be covered twice.",
                                        "The decisions are binary: declaring them continuous can hide fractional assignments in the generalized variant."};
    case Structure::Scheduling: return {"Coverage must count every shift that overlaps a slot, not only shifts starting in it.",
                                        "Staff numbers are integers; rounding an LP solution up is feasible but usually not optimal."};
    case Structure::Routing: return {"Degree constraints alone allow subtours; the MTZ rows (or another elimination) are essential.",
                                     "MTZ rows exclude the depot, and the big-M coefficient must match the bounds of u."};
    case Structure::Transportation: return {"Supply rows use <= and demand rows >=; swapping them makes the model infeasible or trivial.",
                                            "Costs are per unit shipped, so the objective multiplies cost by quantity on every route."};
    case Structure::Blending: return {"Percent requirements must be multiplied by the batch size (or linearised as (a - lo) * x >= 0), never divided by a variable.",
                                      "Availability limits are bounds on single ingredients, not on the batch."};
    case Structure::CapacityPlanning: return {"Each resource row sums usage over all products.",
                                              "Expansion blocks enter the capacity row with the block size as coefficient and their cost in the objective."};
    case Structure::FacilityLocation: return {"Deliveries must be linked to the opening decision (open-before-serve); without it no site is ever opened.",
                                              "Capacity times y[i] both limits flow and forbids flow from closed sites."};
    case Structure::ProductionPlanning: return {"The inventory recursion links consecutive periods; the first period uses the initial stock.",
                                                "Setup linking needs a valid big-M such as capacity divided by hours per unit."};
    case Structure::Portfolio: return {"Average-risk limits are linearised as sum (rho - R) * x <= 0.",
                                       "Returns are percentages: divide by 100 to get money."};
    case Structure::GenericLpMip: return {"Row senses follow the story: resources give <= rows, requirements give >= rows.",
                                          "Only the flagged activities are integer."};
    default: break;  // the families added later keep their pitfalls in the registry (families.cpp)
  }
  return family_info(s).pitfalls;
}

std::string solution_summary(const Instance& in, const Verification& v) {
  std::vector<std::pair<std::string, double>> nz;
  for (size_t j = 0; j < in.model.vars.size() && j < v.x.size(); ++j)
    if (std::fabs(v.x[j]) > 1e-6) nz.push_back({in.model.vars[j].name, v.x[j]});
  std::string s;
  size_t shown = std::min<size_t>(nz.size(), 12);
  for (size_t i = 0; i < shown; ++i) s += "- " + nz[i].first + " = " + fmt_num(nz[i].second) + "\n";
  if (nz.size() > shown) s += fmt::format("- and {} further nonzero variables\n", nz.size() - shown);
  return s;
}

}  // namespace

const char* to_string(CptKind k) { return k == CptKind::ModelReport ? "model_report" : "modeling_rationale"; }

std::string cpt_document(const Instance& in, const Verification& v, const RenderedProblem& problem, CptKind kind, Rng& rng) {
  const auto& dom = domains()[size_t(in.domain)];
  std::string title = capitalize(readable(structure_name(in))) + " (" + dom.name + ", " + in.variant + ")";
  std::string formulation;
  formulation += "Sets: ";
  for (size_t i = 0; i < in.sets.size(); ++i) formulation += (i ? "; " : "") + in.sets[i].symbol + " = " + in.sets[i].description;
  formulation += ".\n\nDecision variables:\n";
  for (const auto& x : in.vars) formulation += "- " + x.symbol + ": " + x.description + " (" + x.domain + ")\n";
  formulation += "\nObjective: " + in.objective_formula + "\n\nConstraints:\n";
  for (const auto& c : in.constraints) formulation += "- " + c.name + ": " + c.formula + "\n";
  std::vector<DataFile> files = answer_files(in, problem);
  std::string code = "```python\n" + python_program(in, problem.data, &files) + "```\n";
  std::string obj = fmt_num(v.objective) + (in.objective_unit.empty() ? "" : " " + in.objective_unit);
  std::string doc;
  if (kind == CptKind::ModelReport) {
    doc = "# " + expand(rng, "{Model report|Optimization model report|Solved model}") + ": " + title + "\n\n";
    doc += "## Problem\n\n" + problem.text + "\n\n";
    doc += "## Formulation\n\n" + formulation + "\n";
    doc += "## LP file\n\n```lp\n" + reference_lp(in) + "```\n\n";
    doc += "## Implementation\n\n" + code + "\n";
    doc += "## Result\n\nCBC reports status optimal with objective value " + obj + " (" + in.objective_description + ").\n";
    std::string sol = solution_summary(in, v);
    if (!sol.empty()) doc += "Nonzero decisions:\n" + sol;
  } else {
    doc = "# " + expand(rng, "{Modeling rationale|Why the model looks this way|Building the model step by step}") + ": " + title + "\n\n";
    doc += "## Situation\n\n" + problem.text + "\n\n";
    doc += "## Decisions\n\n";
    for (const auto& x : in.vars)
      doc += "The decision " + x.symbol + " is the " + x.description + "; it is " + x.domain + ".\n";
    doc += "\n## Objective\n\nThe goal is to " + std::string(in.sense == lp::ObjSense::Minimize ? "minimize " : "maximize ") +
           in.objective_description + ": " + in.objective_formula + ".\n\n## Constraints\n\n";
    for (const auto& c : in.constraints) doc += "- " + capitalize(c.description) + ": " + c.formula + ".\n";
    doc += "\n## Pitfalls\n\n";
    for (const auto& p : in.family_name.empty() ? pitfalls(in.structure) : in.family_pitfalls) doc += "- " + p + "\n";
    doc += "\n## Implementation\n\n" + code;
    doc += "\nSolving this instance gives " + obj + ".\n";
  }
  return doc;
}

}  // namespace trex::ordata
