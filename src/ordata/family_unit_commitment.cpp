// Unit-commitment family (task family: energy): over several periods decide which units run (binary)
// and how much each produces, between its minimum and maximum output when on, to meet every period's
// demand at minimum fixed (running), variable and, in the start-up variant, start-up cost. Demand stays
// below the total capacity, so every draw is feasible.
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_unit_commitment(Ctx& c) {
  static const int kG[4] = {2, 3, 4, 5}, kT[4] = {3, 4, 6, 8};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"commitment", "startup"};
  in.variant = variants[c.ri(0, 1)];
  in.name = "unit_commitment";
  bool startup = in.variant == "startup";
  int ng = c.size(kG), nt = c.size(kT);
  auto units = pick_labels(c.rng, city_names(), ng);
  std::vector<std::string> periods;
  std::string per = capitalize(dom.period);
  for (int t = 1; t <= nt; ++t) periods.push_back(per + std::to_string(t));
  int G = in.add_set("G", "units", dom.source + "s", units);
  int T = in.add_set("T", "periods", dom.period + "s", periods);

  std::vector<double> pmax(static_cast<size_t>(ng)), pmin(static_cast<size_t>(ng)), fixed(static_cast<size_t>(ng)),
      var(static_cast<size_t>(ng)), start(static_cast<size_t>(ng)), demand(static_cast<size_t>(nt));
  double cap = 0;
  for (int g = 0; g < ng; ++g) {
    cap += (pmax[size_t(g)] = double(c.ri(8, 30) * 10));
    pmin[size_t(g)] = std::round(pmax[size_t(g)] * c.ru(0.25, 0.5) / 5) * 5;
    // larger units: cheaper per unit, dearer to keep running (the trade-off of the commitment)
    var[size_t(g)] = std::round((c.ru(8, 14) - pmax[size_t(g)] / 60) * 10) / 10;
    fixed[size_t(g)] = std::round(pmax[size_t(g)] * c.ru(1.5, 4.0) / 10) * 10;
    start[size_t(g)] = std::round(pmax[size_t(g)] * c.ru(1.0, 3.0) / 10) * 10;
  }
  for (auto& d : demand) d = std::round(cap * c.ru(0.3, 0.85) / 5) * 5;
  std::string cu = dom.currency, u = dom.unit;
  in.add_param("P[g]", "max_output", "maximum output when running", u + " per " + dom.period, {G}, pmax);
  in.add_param("p[g]", "min_output", "minimum output when running", u + " per " + dom.period, {G}, pmin);
  in.add_param("f[g]", "running_cost", "fixed cost per " + dom.period + " running", cu, {G}, fixed);
  in.add_param("c[g]", "unit_cost", "variable cost", cu + " per " + u, {G}, var, 1);
  if (startup) in.add_param("s[g]", "startup_cost", "start-up cost", cu, {G}, start);
  in.add_param("D[t]", "demand", "demand", u, {T}, demand);

  in.vars.push_back({"u[g,t]", "1 if unit g runs in period t, else 0", "binary"});
  in.vars.push_back({"q[g,t]", u + " produced by unit g in period t", "continuous, >= 0"});
  if (startup) in.vars.push_back({"v[g,t]", "1 if unit g is started in period t (all units are off before the first period)", "binary"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = std::string("minimize sum_{g,t} (f[g] * u[g,t] + c[g] * q[g,t]") + (startup ? " + s[g] * v[g,t])" : ")");
  in.objective_description = startup ? "running, production and start-up cost" : "running and production cost";
  in.objective_unit = cu;
  in.constraints.push_back({"demand", "sum_{g in G} q[g,t] >= D[t]   for all t in T", "every period's demand is met"});
  in.constraints.push_back({"max", "q[g,t] - P[g] * u[g,t] <= 0   for all g, t", "a unit produces only when running, up to its maximum"});
  in.constraints.push_back({"min", "q[g,t] - p[g] * u[g,t] >= 0   for all g, t", "a running unit produces at least its minimum"});
  if (startup)
    in.constraints.push_back({"start", "v[g,t] - u[g,t] + u[g,t-1] >= 0   for all g, t (u[g,0] = 0)", "switching a unit on is a start-up"});

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  auto idx = [&](int block, int g, int t) { return block * ng * nt + g * nt + t; };
  for (int g = 0; g < ng; ++g)
    for (int t = 0; t < nt; ++t) m.objective.terms.push_back({m.add_var("u_" + units[size_t(g)] + "_" + periods[size_t(t)], lp::VarType::Binary, 0, 1), fixed[size_t(g)]});
  for (int g = 0; g < ng; ++g)
    for (int t = 0; t < nt; ++t) m.objective.terms.push_back({m.add_var("q_" + units[size_t(g)] + "_" + periods[size_t(t)]), var[size_t(g)]});
  if (startup)
    for (int g = 0; g < ng; ++g)
      for (int t = 0; t < nt; ++t)
        m.objective.terms.push_back({m.add_var("v_" + units[size_t(g)] + "_" + periods[size_t(t)], lp::VarType::Binary, 0, 1), start[size_t(g)]});
  for (int t = 0; t < nt; ++t) {
    std::vector<lp::Term> terms;
    for (int g = 0; g < ng; ++g) terms.push_back({idx(1, g, t), 1.0});
    add_row(m, "demand_" + periods[size_t(t)], terms, lp::RowSense::GE, demand[size_t(t)]);
  }
  for (int g = 0; g < ng; ++g)
    for (int t = 0; t < nt; ++t) {
      std::string gt = units[size_t(g)] + "_" + periods[size_t(t)];
      add_row(m, "max_" + gt, {{idx(1, g, t), 1.0}, {idx(0, g, t), -pmax[size_t(g)]}}, lp::RowSense::LE, 0.0);
      add_row(m, "min_" + gt, {{idx(1, g, t), 1.0}, {idx(0, g, t), -pmin[size_t(g)]}}, lp::RowSense::GE, 0.0);
      if (startup) {
        std::vector<lp::Term> terms = {{idx(2, g, t), 1.0}, {idx(0, g, t), -1.0}};
        if (t > 0) terms.push_back({idx(0, g, t - 1), 1.0});
        add_row(m, "start_" + gt, terms, lp::RowSense::GE, 0.0);
      }
    }

  // Narrative scenarios: a generation schedule, a plant (line) activation plan, a depot opening roster.
  int scen = c.scenario(3);
  std::string ul = std::to_string(ng) + " " + dom.source + "s (" + label_list(units) + ")";
  std::string pl = std::to_string(nt) + " " + dom.period + "s";
  if (scen == 0)
    in.intro = capitalize(c.org()) + c.x(" {schedules|plans the operation of|must commit} ") + ul + c.x(" over the next ") + pl +
               c.x(" to {meet|cover|supply} the demand for " + dom.good + ".");
  else if (scen == 1)
    in.intro = c.x("{Over the next|For the coming} ") + pl + ", " + c.org() + c.x(" {decides|has to decide} which of its ") + ul +
               c.x(" to {run|keep running|switch on} in each " + dom.period + " and how much each {produces|delivers}.");
  else
    in.intro = capitalize(c.org()) + c.x(" {can operate|has} ") + ul + c.x("; {demand for|requirements of} " + dom.good + " vary over ") + pl +
               c.x(", and {a unit is either off or runs|each unit, when on, runs} between its minimum and maximum output.");
  in.rules.push_back(c.x("{In every " + dom.period + " the total output must cover the demand|Each " + dom.period +
                         "'s demand must be met by the units running in it}."));
  in.rules.push_back(c.x("{A unit that is off produces nothing; a running unit produces at least its minimum and at most its maximum output|"
                         "Only running units produce, each between its minimum and maximum output}") +
                     c.x("{, and running costs its fixed cost for that " + dom.period + ".|; every " + dom.period + " a unit runs costs its fixed cost.}"));
  if (startup)
    in.rules.push_back(c.x("{All units are off before the first " + dom.period + "; switching a unit on costs its start-up cost|"
                           "Every start-up (a unit running in a " + dom.period + " but not in the one before; all are off at the start) costs its start-up cost}."));
  in.goal = c.x("{Minimize|Find the schedule that minimizes|Plan the operation at minimum} total cost (in " + cu + ").");

  in.python_body =
      "model = gp.Model(\"unit_commitment\")\n"
      "u, q, v = {}, {}, {}\n"
      "for g in units:\n"
      "    for t in periods:\n"
      "        u[g, t] = model.addVar(vtype=GRB.BINARY, name=f\"u_{g}_{t}\")\n"
      "for g in units:\n"
      "    for t in periods:\n"
      "        q[g, t] = model.addVar(lb=0, vtype=GRB.CONTINUOUS, name=f\"q_{g}_{t}\")\n";
  if (startup)
    in.python_body +=
        "for g in units:\n"
        "    for t in periods:\n"
        "        v[g, t] = model.addVar(vtype=GRB.BINARY, name=f\"v_{g}_{t}\")\n"
        "model.setObjective(gp.quicksum(running_cost[g] * u[g, t] + unit_cost[g] * q[g, t] + startup_cost[g] * v[g, t]\n"
        "                               for g in units for t in periods), GRB.MINIMIZE)\n";
  else
    in.python_body +=
        "model.setObjective(gp.quicksum(running_cost[g] * u[g, t] + unit_cost[g] * q[g, t] for g in units for t in periods), GRB.MINIMIZE)\n";
  in.python_body +=
      "for t in periods:\n"
      "    model.addConstr(gp.quicksum(q[g, t] for g in units) >= demand[t], name=f\"demand_{t}\")\n"
      "for g in units:\n"
      "    for k, t in enumerate(periods):\n"
      "        model.addConstr(q[g, t] - max_output[g] * u[g, t] <= 0, name=f\"max_{g}_{t}\")\n"
      "        model.addConstr(q[g, t] - min_output[g] * u[g, t] >= 0, name=f\"min_{g}_{t}\")\n";
  if (startup)
    in.python_body +=
        "        previous = u[g, periods[k - 1]] if k > 0 else 0\n"
        "        model.addConstr(v[g, t] - u[g, t] + previous >= 0, name=f\"start_{g}_{t}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
