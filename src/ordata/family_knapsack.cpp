// Knapsack family (task family: packing): choose items of value and weight under capacity; 0-1,
// multidimensional (several resources) and bounded (integer copies up to a limit) variants.
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_knapsack(Ctx& c) {
  static const int kN[4] = {5, 8, 12, 18}, kR[4] = {2, 2, 3, 4};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"binary", "multidimensional", "bounded"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "knapsack";
  bool multi = in.variant == "multidimensional", bounded = in.variant == "bounded";
  int n = c.size(kN, 2), nr = multi ? c.size(kR) : 1;
  auto items = pick_labels(c.rng, dom.products, n);
  int I = in.add_set("I", "items", "candidate " + dom.product_unit, items);
  std::vector<std::string> res = multi ? pick_labels(c.rng, dom.resources, nr) : std::vector<std::string>{};
  int R = multi ? in.add_set("R", "resources", "limited resources", res) : -1;

    std::vector<double> w(size_t(nr) * size_t(n)), value(static_cast<size_t>(n)), copies(size_t(n), 1.0), cap(static_cast<size_t>(nr));
  // About a third of the items are light (1..4), so that the best selection usually fills a capacity
  // exactly (a binding row); other values are loosely correlated with weight (CBC stays fast).
  for (int i = 0; i < n; ++i) {
    bool light = c.rng.uniform() < 0.35;
    double tw = 0;
    for (int r = 0; r < nr; ++r) tw += (w[size_t(r * n + i)] = double(light ? c.ri(1, 4) : c.ri(5, 30)));
    // light items are low-value fillers: taken last, they close the gap to the capacity
    if (light) {
      value[size_t(i)] = std::max(1.0, std::round(tw / nr * c.ru(0.6, 1.0)));
    } else {
      double v = std::round(tw / nr * c.ru(0.9, 2.0));  // two draws, sequenced (the family file's order)
      value[size_t(i)] = v + double(c.ri(1, 12));
    }
    if (bounded) copies[size_t(i)] = double(c.ri(2, 5));
  }
  for (int r = 0; r < nr; ++r) {
    double total = 0, wmax = 0;
    for (int i = 0; i < n; ++i) total += w[size_t(r * n + i)] * copies[size_t(i)], wmax = std::max(wmax, w[size_t(r * n + i)]);
    cap[size_t(r)] = std::max(wmax, std::round(total * c.ru(0.3, 0.6)));
  }
  std::string cu = dom.currency, ru = multi ? dom.resource_unit : "kg";
  in.add_param("v[i]", "value", "value of one item", cu, {I}, value);
  if (multi) {
    in.add_param("w[r,i]", "usage", "resource use of one item", dom.resource_unit, {R, I}, w);
    in.add_param("W[r]", "capacity", "resource capacity", dom.resource_unit, {R}, cap);
  } else {
    in.add_param("w[i]", "weight", "weight of one item", ru, {I}, w);
    in.add_param("W", "capacity", "capacity", ru, {}, cap);
  }
  if (bounded) in.add_param("u[i]", "max_copies", "copies available", "copies", {I}, copies);

  in.vars.push_back({"x[i]", bounded ? "copies of item i selected" : "1 if item i is selected, else 0",
                     bounded ? "integer, 0 <= x[i] <= u[i]" : "binary"});
  in.sense = lp::ObjSense::Maximize;
  in.objective_formula = "maximize sum_{i in I} v[i] * x[i]";
  in.objective_description = "total value of the selected items";
  in.objective_unit = cu;
  in.constraints.push_back(multi ? ConDef{"capacity", "sum_{i in I} w[r,i] * x[i] <= W[r]   for all r in R",
                                          "no resource is used beyond its capacity"}
                                 : ConDef{"capacity", "sum_{i in I} w[i] * x[i] <= W", "the selection fits the capacity"});

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Maximize;
  for (int i = 0; i < n; ++i) {
    int v = m.add_var("x_" + items[size_t(i)], bounded ? lp::VarType::Integer : lp::VarType::Binary, 0, copies[size_t(i)]);
    m.objective.terms.push_back({v, value[size_t(i)]});
  }
  for (int r = 0; r < nr; ++r) {
    std::vector<lp::Term> t;
    for (int i = 0; i < n; ++i) t.push_back({i, w[size_t(r * n + i)]});
    add_row(m, multi ? "capacity_" + res[size_t(r)] : "capacity", t, lp::RowSense::LE, cap[size_t(r)]);
  }

  // Narrative scenarios: a shipment to load, a project budget to fill, a production run to pick.
  int scen = c.scenario(3);
  std::string what = dom.product_unit + " (" + label_list(items) + ")";
  // Every draw of a sentence is its own statement, left to right (the order of the family file
  // configs/families/item_selection.toml; the operands of + are not sequenced).
  if (scen == 0) {
    std::string org = capitalize(c.org());
    std::string load = c.x(" {is loading|must load|prepares} a {single |}{shipment|consignment|container} and ");
    in.intro = org + load + c.x("{can choose among|has a list of|picks from} ") + std::to_string(n) + " " + what + ".";
  } else if (scen == 1) {
    std::string org = capitalize(c.org());
    std::string decide = c.x(" {selects|must decide} which of ");
    in.intro = org + decide + std::to_string(n) + " " + what +
               c.x(" to {include in|take into} {this " + dom.period + "'s|the next} {plan|programme|order}.");
  } else {
    std::string when = c.x("{For the coming " + dom.period + ", |This " + dom.period + " }");
    std::string org = c.org();
    in.intro = when + org + c.x(" {has room for only part of|cannot accept all of|can fit only some of} ") + std::to_string(n) + " candidate " + what + ".";
  }
  if (multi) {
    std::string uses = c.x("{Every item consumes|Each selected item uses} ");
    in.rules.push_back(uses + dom.resource_unit +
                       c.x(" of several resources ({" + label_list(res) + "}), and {no resource may exceed its capacity|each resource has a fixed capacity that cannot be exceeded}."));
  } else {
    std::string weight = c.x("{The total weight of the selected items|What is selected, weighed together,} ");
    in.rules.push_back(weight + c.x("{must not exceed|may be at most|cannot be more than} the capacity."));
  }
  if (bounded)
    in.rules.push_back(c.x("{Several copies of an item may be taken, up to the number available|An item can be chosen more than once, but no more often than its available copies}; only whole copies count."));
  else
    in.rules.push_back(c.x("{Each item is either taken whole or left out|An item cannot be split: it is taken completely or not at all|Items are indivisible}."));
  in.goal = c.x("{Maximize|Choose the selection that maximizes|Find which items to take to maximize} the total value (in " + cu + ").");

  std::string vt = bounded ? "lb=0, ub=max_copies[i], vtype=GRB.INTEGER" : "vtype=GRB.BINARY";
  in.python_body =
      "model = gp.Model(\"knapsack\")\n"
      "x = {}\n"
      "for i in items:\n"
      "    x[i] = model.addVar(" + vt + ", name=f\"x_{i}\")\n"
      "model.setObjective(gp.quicksum(value[i] * x[i] for i in items), GRB.MAXIMIZE)\n";
  if (multi)
    in.python_body +=
        "for r in resources:\n"
        "    model.addConstr(gp.quicksum(usage[r][i] * x[i] for i in items) <= capacity[r], name=f\"capacity_{r}\")\n";
  else
    in.python_body += "model.addConstr(gp.quicksum(weight[i] * x[i] for i in items) <= capacity, name=\"capacity\")\n";
  return in;
}

}  // namespace trex::ordata::detail
