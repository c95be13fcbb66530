// Diet family (task family: diet): buy amounts of foods (the domain's ingredients) at minimum cost so
// that every nutrient (the domain's attributes) lies between a minimum and, for some, a maximum total;
// continuous and integer-servings variants. The limits are set around a planted purchase, so every
// draw is feasible.
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_diet(Ctx& c) {
  static const int kF[4] = {4, 6, 8, 10};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"continuous", "integer_servings"};
  in.variant = variants[c.ri(0, 1)];
  in.name = "diet";
  bool integer = in.variant == "integer_servings";
  int nf = c.size(kF), nk = std::min(int(dom.attributes.size()), c.level() == 0 ? 2 : 3);
  auto foods = pick_labels(c.rng, dom.ingredients, nf);
  auto nutrients = pick_labels(c.rng, dom.attributes, nk);
  int F = in.add_set("F", "foods", "available " + dom.blend + " ingredients", foods);
  int K = in.add_set("K", "nutrients", "requirements", nutrients);

  std::string bu = dom.blend_unit, cu = dom.currency;
  std::vector<double> a(size_t(nk) * size_t(nf)), cost(static_cast<size_t>(nf)), planted(static_cast<size_t>(nf)),
      lo(static_cast<size_t>(nk)), hi(static_cast<size_t>(nk)), maxq(static_cast<size_t>(nf));
  for (auto& v : a) v = double(c.ri(0, 12));
  for (int f = 0; f < nf; ++f) {
    cost[size_t(f)] = std::round(c.ru(1.5, 9.0) * 10) / 10;
    planted[size_t(f)] = c.rng.uniform() < 0.6 ? double(c.ri(1, 8)) : 0.0;
    maxq[size_t(f)] = planted[size_t(f)] + double(c.ri(2, 6));
  }
  for (int k = 0; k < nk; ++k) {
    double t = 0;
    for (int f = 0; f < nf; ++f) t += a[size_t(k * nf + f)] * planted[size_t(f)];
    if (t < 4) {  // every nutrient is supplied by the planted purchase
      int f = int(c.ri(0, nf - 1));
      if (planted[size_t(f)] == 0) planted[size_t(f)] = 2, maxq[size_t(f)] += 2;
      a[size_t(k * nf + f)] += 6;
      t = 0;
      for (int g = 0; g < nf; ++g) t += a[size_t(k * nf + g)] * planted[size_t(g)];
    }
    lo[size_t(k)] = std::floor(t * c.ru(0.6, 0.9));
    hi[size_t(k)] = c.rng.uniform() < 0.5 ? std::ceil(t * c.ru(1.05, 1.4)) : 0.0;  // 0: no upper limit
  }
  // Earlier nutrients may have changed after a later fix-up of planted amounts; limits stay valid
  // because planted amounts only grew (lower limits) and upper limits are checked here.
  for (int k = 0; k < nk; ++k) {
    double t = 0;
    for (int f = 0; f < nf; ++f) t += a[size_t(k * nf + f)] * planted[size_t(f)];
    if (hi[size_t(k)] > 0 && hi[size_t(k)] < t) hi[size_t(k)] = std::ceil(t * 1.1);
  }
  in.add_param("c[f]", "cost", "price", cu + " per " + bu, {F}, cost, 1);
  in.add_param("a[k,f]", "content", "nutrient content", "units per " + bu, {K, F}, a);
  in.add_param("L[k]", "min_amount", "minimum total", "units", {K}, lo);
  in.add_param("U[k]", "max_amount", "maximum total (0: no limit)", "units", {K}, hi);
  if (integer) in.add_param("m[f]", "max_servings", "largest purchase", bu, {F}, maxq);

  in.vars.push_back({"x[f]", bu + " of food f bought", integer ? "integer, 0 <= x[f] <= m[f]" : "continuous, >= 0"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = "minimize sum_{f in F} c[f] * x[f]";
  in.objective_description = "total cost of the purchase";
  in.objective_unit = cu;
  in.constraints.push_back({"min", "sum_{f in F} a[k,f] * x[f] >= L[k]   for all k in K", "every nutrient reaches its minimum"});
  in.constraints.push_back({"max", "sum_{f in F} a[k,f] * x[f] <= U[k]   for all k in K with U[k] > 0",
                            "nutrients with a maximum stay below it"});

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  for (int f = 0; f < nf; ++f) {
    int v = m.add_var("x_" + foods[size_t(f)], integer ? lp::VarType::Integer : lp::VarType::Continuous, 0, integer ? maxq[size_t(f)] : lp::kInf);
    m.objective.terms.push_back({v, cost[size_t(f)]});
  }
  auto row = [&](int k) {
    std::vector<lp::Term> t;
    for (int f = 0; f < nf; ++f) t.push_back({f, a[size_t(k * nf + f)]});
    return t;
  };
  for (int k = 0; k < nk; ++k) add_row(m, "min_" + nutrients[size_t(k)], row(k), lp::RowSense::GE, lo[size_t(k)]);
  for (int k = 0; k < nk; ++k)
    if (hi[size_t(k)] > 0) add_row(m, "max_" + nutrients[size_t(k)], row(k), lp::RowSense::LE, hi[size_t(k)]);

  // Narrative scenarios: a daily ration, a supplement order, a menu/recipe plan.
  int scen = c.scenario(3);
  std::string fl = std::to_string(nf) + " ingredients (" + label_list(foods) + ")";
  std::string nl = label_list(nutrients);
  if (scen == 0)
    in.intro = capitalize(c.org()) + c.x(" {composes|puts together|designs} a {daily|weekly} ration of " + dom.blend + " from ") + fl +
               c.x("; {each|every} ingredient supplies known amounts of " + nl + ".");
  else if (scen == 1)
    in.intro = c.x("{To meet its " + nl + " targets|For its " + nl + " requirements}, ") + c.org() + c.x(" {buys|orders|sources} ") + fl +
               c.x(" {for the coming " + dom.period + "|this " + dom.period + "}.");
  else
    in.intro = capitalize(c.org()) + c.x(" {must choose how much of each of|is deciding the amounts of} ") + fl +
               c.x(" {to buy|to use} so that the total " + nl + " {fall within the required limits|meet the requirements}.");
  in.rules.push_back(c.x("{The total of every nutrient must reach its minimum|Each requirement has a minimum total that must be met}") +
                     c.x("{, and nutrients with a maximum (a maximum of 0 means none) must not exceed it|; where a maximum is given (0 means no maximum), the total may not exceed it}."));
  if (integer)
    in.rules.push_back(c.x("{Ingredients are bought in whole " + bu + ", up to the largest purchase allowed|Only whole " + bu +
                           " can be bought, and no more than the largest purchase of each ingredient}."));
  in.goal = c.x("{Minimize|Find the cheapest purchase, minimizing|Choose the amounts that minimize} the total cost (in " + cu + ").");

  in.python_body =
      "model = gp.Model(\"diet\")\n"
      "x = {}\n"
      "for f in foods:\n";
  in.python_body += integer ? "    x[f] = model.addVar(lb=0, ub=max_servings[f], vtype=GRB.INTEGER, name=f\"x_{f}\")\n"
                            : "    x[f] = model.addVar(lb=0, vtype=GRB.CONTINUOUS, name=f\"x_{f}\")\n";
  in.python_body +=
      "model.setObjective(gp.quicksum(cost[f] * x[f] for f in foods), GRB.MINIMIZE)\n"
      "for k in nutrients:\n"
      "    model.addConstr(gp.quicksum(content[k][f] * x[f] for f in foods if content[k][f] != 0) >= min_amount[k], name=f\"min_{k}\")\n"
      "for k in nutrients:\n"
      "    if max_amount[k] > 0:\n"
      "        model.addConstr(gp.quicksum(content[k][f] * x[f] for f in foods if content[k][f] != 0) <= max_amount[k], name=f\"max_{k}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
