// Generic LP/MIP family: activity levels under resource rows (max, <=), covering requirements
// (min, >=), or a mixed-integer model with both kinds of rows.
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_generic(Ctx& c) {
  static const int kJ[4] = {2, 4, 7, 12}, kR[4] = {2, 3, 5, 8};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"max_le", "min_ge", "mixed_integer"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "generic_model";
  bool cover = in.variant == "min_ge", mixed = in.variant == "mixed_integer";
  int nj = c.size(kJ), nr = c.size(kR);
  std::vector<std::string> acts, rows;
  for (int j = 0; j < nj; ++j) acts.push_back("A" + std::to_string(j + 1));
  for (int r = 0; r < nr; ++r) rows.push_back((cover ? "Q" : "R") + std::to_string(r + 1));
  int J = in.add_set("J", "activities", "activities", acts);
  int R = in.add_set("R", "limits", cover ? "requirements" : "resources", rows);
  std::vector<double> coef(static_cast<size_t>(nj)), a(size_t(nr) * size_t(nj)), b(static_cast<size_t>(nr));
  for (auto& v : coef) v = double(c.ri(3, 40));
  for (int r = 0; r < nr; ++r)
    for (int j = 0; j < nj; ++j) a[size_t(r * nj + j)] = c.rng.bernoulli(0.75) ? double(c.ri(1, 12)) : 0.0;
  for (int j = 0; j < nj; ++j) {  // every activity appears in some row
    bool any = false;
    for (int r = 0; r < nr; ++r) any |= a[size_t(r * nj + j)] != 0.0;
    if (!any) a[size_t(c.ri(0, nr - 1) * nj + j)] = double(c.ri(1, 12));
  }
  for (int r = 0; r < nr; ++r) {
    double s = 0;
    for (int j = 0; j < nj; ++j) s += a[size_t(r * nj + j)];
    b[size_t(r)] = std::max(1.0, std::round(s * c.ru(2.0, 9.0)));
  }
  std::vector<double> integer(size_t(nj), 0.0);
  if (mixed)
    for (auto& v : integer) v = c.rng.bernoulli(0.5) ? 1.0 : 0.0;
  std::string cu = dom.currency;
  in.add_param("c[j]", "value", cover ? "cost per unit of activity" : "value per unit of activity", cu, {J}, coef);
  in.add_param("a[r,j]", "coef", cover ? "contribution to each requirement" : "use of each resource", "units per unit", {R, J}, a);
  in.add_param("b[r]", "rhs", cover ? "required amount" : "available amount", "units", {R}, b);
  if (mixed) in.add_param("g[j]", "is_integer", "integrality flag (1 = whole units only)", "", {J}, integer);

  in.vars.push_back({"x[j]", "level of activity j", mixed ? "integer if g[j] = 1, else continuous; >= 0" : "continuous, >= 0"});
  in.sense = cover ? lp::ObjSense::Minimize : lp::ObjSense::Maximize;
  in.objective_formula = std::string(cover ? "minimize" : "maximize") + " sum_{j in J} c[j] * x[j]";
  in.objective_description = cover ? "total cost" : "total value";
  in.objective_unit = cu;
  in.constraints.push_back({"limit", std::string("sum_{j in J} a[r,j] * x[j] ") + (cover ? ">=" : "<=") + " b[r]   for all r in R",
                            cover ? "every requirement is met" : "no resource is overused"});

  auto& m = in.model;
  m.objective.sense = in.sense;
  for (int j = 0; j < nj; ++j) {
    int v = m.add_var("x_" + acts[size_t(j)], integer[size_t(j)] != 0.0 ? lp::VarType::Integer : lp::VarType::Continuous);
    m.objective.terms.push_back({v, coef[size_t(j)]});
  }
  for (int r = 0; r < nr; ++r) {
    std::vector<lp::Term> t;
    for (int j = 0; j < nj; ++j) t.push_back({j, a[size_t(r * nj + j)]});
    add_row(m, "limit_" + rows[size_t(r)], t, cover ? lp::RowSense::GE : lp::RowSense::LE, b[size_t(r)]);
  }

  in.intro = capitalize(c.org()) + c.x(" {chooses|must set|decides} the levels of ") + std::to_string(nj) +
             c.x(" {activities|operations} (" + join_list(acts) + ")") +
             (cover ? c.x(" {that together must satisfy|to cover} ") + std::to_string(nr) + " requirements (" + join_list(rows) + ")."
                    : c.x(" {that draw on|sharing} ") + std::to_string(nr) + " limited resources (" + join_list(rows) + ").");
  if (cover)
    in.rules.push_back(c.x("{Each unit of an activity contributes|Every unit of activity adds} to the requirements as given, and "
                           "{each requirement must reach|every requirement needs at least} its required amount."));
  else
    in.rules.push_back(c.x("{Each unit of an activity uses|Every unit of activity consumes} resources as given, and "
                           "{no resource may exceed|total use stays within} its available amount."));
  in.rules.push_back(mixed ? c.x("{Activities flagged as integer (flag 1) must take whole values|Activities with integrality flag 1 are whole units only}; the others are continuous and non-negative.")
                           : c.x("{Activity levels are continuous and non-negative|Fractional levels are allowed; negative ones are not}."));
  in.goal = cover ? c.x("{Minimize|Find the levels that minimize} the total cost (in " + cu + ").")
                  : c.x("{Maximize|Find the levels that maximize} the total value (in " + cu + ").");

  in.python_body =
      "model = gp.Model(\"generic_model\")\n"
      "x = {}\n"
      "for j in activities:\n";
  in.python_body += mixed ? "    vtype = GRB.INTEGER if is_integer[j] == 1 else GRB.CONTINUOUS\n"
                            "    x[j] = model.addVar(lb=0, vtype=vtype, name=f\"x_{j}\")\n"
                          : "    x[j] = model.addVar(lb=0, vtype=GRB.CONTINUOUS, name=f\"x_{j}\")\n";
  in.python_body += std::string("model.setObjective(gp.quicksum(value[j] * x[j] for j in activities), ") +
                    (cover ? "GRB.MINIMIZE" : "GRB.MAXIMIZE") + ")\n" +
                    "for r in limits:\n"
                    "    model.addConstr(gp.quicksum(coef[r][j] * x[j] for j in activities) " + (cover ? ">=" : "<=") +
                    " rhs[r], name=f\"limit_{r}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
