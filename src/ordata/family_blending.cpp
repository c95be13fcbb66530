// Blending family: mix ingredients at minimum cost so that attribute percentages stay within
// bounds; fixed batch, integer batch and the ratio (no fixed batch size) variants.
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_blending(Ctx& c) {
  static const int kI[4] = {3, 4, 6, 9}, kA[4] = {2, 2, 3, 3};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"fixed_batch", "integer_batch", "ratio"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "blending";
  bool ratio = in.variant == "ratio", integer = in.variant == "integer_batch";
  int ni = std::min(c.size(kI), 12), na = std::min(c.size(kA, 0), int(dom.attributes.size()));
  auto ingr = pick_labels(c.rng, dom.ingredients, ni);
  std::vector<std::string> attr(dom.attributes.begin(), dom.attributes.begin() + na);
  int I = in.add_set("I", "ingredients", "ingredients", ingr);
  int A = in.add_set("A", "attributes", "attributes", attr);
  std::vector<double> content(size_t(ni) * size_t(na)), cost(static_cast<size_t>(ni)), lo(static_cast<size_t>(na)), hi(static_cast<size_t>(na)), avail(static_cast<size_t>(ni));
  for (auto& v : content) v = double(c.ri(1, 45));
  for (auto& v : cost) v = double(c.ri(12, 95));
  double batch = double(c.ri(10, 60) * 10 * (c.level() + 1));
  // A reference blend keeps the bounds feasible.
  std::vector<double> w(static_cast<size_t>(ni));
  double ws = 0;
  for (auto& v : w) ws += (v = c.ru(0.2, 1.0));
  for (auto& v : w) v /= ws;
  for (int a = 0; a < na; ++a) {
    double avg = 0;
    for (int i = 0; i < ni; ++i) avg += w[size_t(i)] * content[size_t(i * na + a)];
    lo[size_t(a)] = std::max(0.0, std::floor(avg * c.ru(0.8, 0.97)));
    hi[size_t(a)] = std::ceil(avg * c.ru(1.03, 1.25));
  }
  for (int i = 0; i < ni; ++i) avail[size_t(i)] = std::ceil(batch * std::max(w[size_t(i)] * 1.15, c.ru(0.25, 0.7)) / 10) * 10;
  std::string u = dom.blend_unit, cu = dom.currency;
  in.add_param("c[i]", "cost", "cost", cu + " per " + u, {I}, cost);
  in.add_param("a[i,k]", "content", "content", "percent", {I, A}, content);
  in.add_param("lo[k]", "min_pct", "minimum share in the blend", "percent", {A}, lo);
  in.add_param("hi[k]", "max_pct", "maximum share in the blend", "percent", {A}, hi);
  in.add_param("s[i]", "available", "availability", u, {I}, avail);
  in.add_param("B", "batch", ratio ? "minimum production" : "batch size", u, {}, {batch});

  in.vars.push_back({"x[i]", u + " of ingredient i used in the " + dom.blend, integer ? "integer, 0 <= x[i] <= s[i]" : "continuous, 0 <= x[i] <= s[i]"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = "minimize sum_{i in I} c[i] * x[i]";
  in.objective_description = "total ingredient cost";
  in.objective_unit = cu;
  if (ratio) {
    in.constraints.push_back({"batch", "sum_{i in I} x[i] >= B", "produce at least B"});
    in.constraints.push_back({"min", "sum_{i in I} (a[i,k] - lo[k]) * x[i] >= 0   for all k in A",
                              "average content at least lo[k] (ratio linearised by multiplying out the total)"});
    in.constraints.push_back({"max", "sum_{i in I} (a[i,k] - hi[k]) * x[i] <= 0   for all k in A", "average content at most hi[k]"});
  } else {
    in.constraints.push_back({"batch", "sum_{i in I} x[i] = B", "the batch has exactly B"});
    in.constraints.push_back({"min", "sum_{i in I} a[i,k] * x[i] >= lo[k] * B   for all k in A", "content at least lo[k] percent"});
    in.constraints.push_back({"max", "sum_{i in I} a[i,k] * x[i] <= hi[k] * B   for all k in A", "content at most hi[k] percent"});
  }

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  for (int i = 0; i < ni; ++i) {
    int v = m.add_var("x_" + ingr[size_t(i)], integer ? lp::VarType::Integer : lp::VarType::Continuous, 0.0, avail[size_t(i)]);
    m.objective.terms.push_back({v, cost[size_t(i)]});
  }
  std::vector<lp::Term> all;
  for (int i = 0; i < ni; ++i) all.push_back({i, 1.0});
  add_row(m, "batch", all, ratio ? lp::RowSense::GE : lp::RowSense::EQ, batch);
  for (int k = 0; k < na; ++k) {
    std::vector<lp::Term> tl, th;
    for (int i = 0; i < ni; ++i) {
      double a = content[size_t(i * na + k)];
      tl.push_back({i, ratio ? a - lo[size_t(k)] : a});
      th.push_back({i, ratio ? a - hi[size_t(k)] : a});
    }
    add_row(m, "min_" + attr[size_t(k)], tl, lp::RowSense::GE, ratio ? 0.0 : lo[size_t(k)] * batch);
    add_row(m, "max_" + attr[size_t(k)], th, lp::RowSense::LE, ratio ? 0.0 : hi[size_t(k)] * batch);
  }

  in.intro = capitalize(c.org()) + c.x(" {produces|mixes|prepares} " + dom.blend + " from ") + std::to_string(ni) +
             c.x(" {ingredients|raw materials|inputs} (") + label_list(ingr) + ")" +
             c.x("{ and wants the cheapest recipe| and is looking for the least-cost mix|}.");
  if (ratio)
    in.rules.push_back(c.x("{At least|A minimum of} ") + fmt_num(batch) + " " + u + c.x(" {must be produced|are needed}; the total may be larger."));
  else
    in.rules.push_back(c.rng.bernoulli(0.5) ? "The batch must contain exactly " + fmt_num(batch) + " " + u + c.x("{| of " + dom.blend + "}.")
                                            : "Exactly " + fmt_num(batch) + " " + u + c.x(" {are produced|make up one batch|of " + dom.blend + " are needed}."));
  in.rules.push_back(c.x("{For every attribute (|For each attribute (}") + label_list(attr) +
                     c.x(") the {share|percentage} in the final blend must lie between its minimum and maximum share; "
                         "{the blend's share is the weighted average of the ingredient contents|contents mix linearly by weight}."));
  in.rules.push_back(c.x("{No ingredient can be used beyond its availability|Each ingredient is limited by its availability}."));
  if (integer) in.rules.push_back(c.x("{Ingredients are bought in whole " + u + "|Quantities must be whole " + u + "}."));
  in.goal = c.x("{Minimize|Find the recipe that minimizes|Determine the mix with the lowest} total ingredient cost (in " + cu + ").");

  in.python_body =
      "model = gp.Model(\"blending\")\n"
      "x = {}\n"
      "for i in ingredients:\n"
      "    x[i] = model.addVar(lb=0, ub=available[i], vtype=" + std::string(integer ? "GRB.INTEGER" : "GRB.CONTINUOUS") +
      ", name=f\"x_{i}\")\n"
      "model.setObjective(gp.quicksum(cost[i] * x[i] for i in ingredients), GRB.MINIMIZE)\n";
  if (ratio)
    in.python_body +=
        "model.addConstr(gp.quicksum(x[i] for i in ingredients) >= batch, name=\"batch\")\n"
        "for k in attributes:\n"
        "    model.addConstr(gp.quicksum((content[i][k] - min_pct[k]) * x[i] for i in ingredients) >= 0, name=f\"min_{k}\")\n"
        "    model.addConstr(gp.quicksum((content[i][k] - max_pct[k]) * x[i] for i in ingredients) <= 0, name=f\"max_{k}\")\n";
  else
    in.python_body +=
        "model.addConstr(gp.quicksum(x[i] for i in ingredients) == batch, name=\"batch\")\n"
        "for k in attributes:\n"
        "    model.addConstr(gp.quicksum(content[i][k] * x[i] for i in ingredients) >= min_pct[k] * batch, name=f\"min_{k}\")\n"
        "    model.addConstr(gp.quicksum(content[i][k] * x[i] for i in ingredients) <= max_pct[k] * batch, name=f\"max_{k}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
