// Supply-chain family (task families: supply chain, network design): plants ship to distribution
// centres, which forward to customers. two_echelon: DC throughput capacities, flow balance at every
// DC (LP). fixed_charge: every DC-to-customer link must be opened at a fixed cost before it carries
// flow (x[d,c] <= demand[c] * y[d,c], y binary), the single-commodity fixed-charge network design.
// Supply and DC capacity exceed the total demand, so every draw is feasible.
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_supply_chain(Ctx& c) {
  static const int kP[4] = {2, 2, 3, 4}, kD[4] = {2, 3, 3, 4}, kC[4] = {3, 4, 6, 8};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"two_echelon", "fixed_charge"};
  in.variant = variants[c.ri(0, 1)];
  in.name = "supply_chain";
  bool fixed = in.variant == "fixed_charge";
  int np = c.size(kP, 0), nd = c.size(kD, 0), nc = c.size(kC);
  auto places = pick_labels(c.rng, city_names(), np + nd + nc);
  std::vector<std::string> pl(places.begin(), places.begin() + np), dl(places.begin() + np, places.begin() + np + nd),
      cl(places.begin() + np + nd, places.end());
  int P = in.add_set("P", "plants", "plants", pl);
  int D = in.add_set("D", "centres", "distribution centres", dl);
  int C = in.add_set("C", "customers", dom.sink + "s", cl);

  std::vector<double> dem(static_cast<size_t>(nc)), sup(static_cast<size_t>(np)), cap(static_cast<size_t>(nd));
  double total = 0;
  for (auto& d : dem) total += (d = double(c.ri(3, 25) * 5));
  for (auto& s : sup) s = std::ceil(total * c.ru(1.1, 1.5) / np / 5) * 5;
  for (auto& k : cap) k = std::ceil(total * c.ru(1.2, 1.6) / nd / 5) * 5;
  auto c1 = random_distances(c.rng, np, nd, c.ru(0.05, 0.15), 1.0);
  auto c2 = random_distances(c.rng, nd, nc, c.ru(0.1, 0.25), 1.0);
  std::vector<double> g(size_t(nd) * size_t(nc));
  for (auto& v : g) v = double(c.ri(10, 60) * 10);
  std::string cu = dom.currency, u = dom.unit;
  in.add_param("s[p]", "supply", "plant supply", u, {P}, sup);
  if (!fixed) in.add_param("k[d]", "throughput", "centre throughput capacity", u, {D}, cap);
  in.add_param("q[c]", "demand", "customer demand", u, {C}, dem);
  in.add_param("a[p,d]", "inbound_cost", "plant-to-centre cost", cu + " per " + u, {P, D}, c1);
  in.add_param("b[d,c]", "outbound_cost", "centre-to-customer cost", cu + " per " + u, {D, C}, c2);
  if (fixed) in.add_param("g[d,c]", "link_cost", "fixed cost of opening a centre-to-customer link", cu, {D, C}, g);

  in.vars.push_back({"x[p,d]", u + " shipped from plant p to centre d", "continuous, >= 0"});
  in.vars.push_back({"z[d,c]", u + " shipped from centre d to customer c", "continuous, >= 0"});
  if (fixed) in.vars.push_back({"y[d,c]", "1 if the link from centre d to customer c is opened, else 0", "binary"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = std::string("minimize sum a[p,d] x[p,d] + sum b[d,c] z[d,c]") + (fixed ? " + sum g[d,c] y[d,c]" : "");
  in.objective_description = fixed ? "transport cost plus link opening cost" : "total transport cost";
  in.objective_unit = cu;
  in.constraints.push_back({"supply", "sum_{d in D} x[p,d] <= s[p]   for all p in P", "no plant ships more than its supply"});
  in.constraints.push_back({"balance", "sum_{p in P} x[p,d] - sum_{c in C} z[d,c] = 0   for all d in D", "a centre forwards what it receives"});
  if (!fixed) in.constraints.push_back({"throughput", "sum_{p in P} x[p,d] <= k[d]   for all d in D", "a centre handles at most its capacity"});
  in.constraints.push_back({"demand", "sum_{d in D} z[d,c] >= q[c]   for all c in C", "every customer receives its demand"});
  if (fixed) in.constraints.push_back({"link", "z[d,c] - q[c] * y[d,c] <= 0   for all d, c", "only opened links carry flow"});

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  for (int p = 0; p < np; ++p)
    for (int d = 0; d < nd; ++d) m.objective.terms.push_back({m.add_var("x_" + pl[size_t(p)] + "_" + dl[size_t(d)]), c1[size_t(p * nd + d)]});
  int z0 = m.num_vars();
  for (int d = 0; d < nd; ++d)
    for (int k = 0; k < nc; ++k) m.objective.terms.push_back({m.add_var("z_" + dl[size_t(d)] + "_" + cl[size_t(k)]), c2[size_t(d * nc + k)]});
  int y0 = m.num_vars();
  if (fixed)
    for (int d = 0; d < nd; ++d)
      for (int k = 0; k < nc; ++k)
        m.objective.terms.push_back({m.add_var("y_" + dl[size_t(d)] + "_" + cl[size_t(k)], lp::VarType::Binary, 0, 1), g[size_t(d * nc + k)]});
  for (int p = 0; p < np; ++p) {
    std::vector<lp::Term> t;
    for (int d = 0; d < nd; ++d) t.push_back({p * nd + d, 1.0});
    add_row(m, "supply_" + pl[size_t(p)], t, lp::RowSense::LE, sup[size_t(p)]);
  }
  for (int d = 0; d < nd; ++d) {
    std::vector<lp::Term> t;
    for (int p = 0; p < np; ++p) t.push_back({p * nd + d, 1.0});
    for (int k = 0; k < nc; ++k) t.push_back({z0 + d * nc + k, -1.0});
    add_row(m, "balance_" + dl[size_t(d)], t, lp::RowSense::EQ, 0.0);
  }
  if (!fixed)
    for (int d = 0; d < nd; ++d) {
      std::vector<lp::Term> t;
      for (int p = 0; p < np; ++p) t.push_back({p * nd + d, 1.0});
      add_row(m, "throughput_" + dl[size_t(d)], t, lp::RowSense::LE, cap[size_t(d)]);
    }
  for (int k = 0; k < nc; ++k) {
    std::vector<lp::Term> t;
    for (int d = 0; d < nd; ++d) t.push_back({z0 + d * nc + k, 1.0});
    add_row(m, "demand_" + cl[size_t(k)], t, lp::RowSense::GE, dem[size_t(k)]);
  }
  if (fixed)
    for (int d = 0; d < nd; ++d)
      for (int k = 0; k < nc; ++k)
        add_row(m, "link_" + dl[size_t(d)] + "_" + cl[size_t(k)], {{z0 + d * nc + k, 1.0}, {y0 + d * nc + k, -dem[size_t(k)]}}, lp::RowSense::LE, 0.0);

  // Narrative scenarios: a distribution network, a regional network redesign, a seasonal plan.
  int scen = c.scenario(3);
  std::string ps = std::to_string(np) + " plants (" + label_list(pl) + ")", ds = std::to_string(nd) + " distribution centres (" + label_list(dl) + ")",
              cs = std::to_string(nc) + " " + dom.sink + "s (" + label_list(cl) + ")";
  if (scen == 0)
    in.intro = capitalize(c.org()) + c.x(" {ships|moves|sends} ") + dom.good + " from " + ps + " through " + ds + " to " + cs + ".";
  else if (scen == 1)
    in.intro = c.x("{In its two-stage network|In its distribution chain}, ") + c.org() + " supplies " + cs + c.x(" {via|through} ") + ds +
               c.x(", which are {stocked|replenished} from ") + ps + ".";
  else
    in.intro = capitalize(c.org()) + c.x(" {plans|must plan} the next " + dom.period + "'s flow of " + dom.good + ": ") + ps + c.x(" {feed|supply} ") + ds +
               c.x(", and these {serve|deliver to} ") + cs + ".";
  in.rules.push_back(c.x("{No plant ships more than its supply|Plants are limited by their supply}") +
                     c.x("{, every centre forwards exactly what it receives|; a centre keeps no stock: what comes in goes out}") +
                     c.x("{, and every " + dom.sink + " receives at least its demand.|; each " + dom.sink + "'s demand must be met.}"));
  if (fixed)
    in.rules.push_back(c.x("{A centre can deliver to a " + dom.sink + " only over an opened link, and opening a link costs its fixed cost|"
                           "Links from the centres to the " + dom.sink + "s must be opened (at a fixed cost) before they carry anything}."));
  else
    in.rules.push_back(c.x("{Every centre handles at most its throughput capacity|The inflow of a centre is limited by its throughput capacity}."));
  in.goal = c.x("{Minimize|Find the flows that minimize|Plan the network at minimum} total cost (in " + cu + ").");

  in.python_body =
      "model = gp.Model(\"supply_chain\")\n"
      "x = {(p, d): model.addVar(lb=0, name=f\"x_{p}_{d}\") for p in plants for d in centres}\n"
      "z = {(d, c): model.addVar(lb=0, name=f\"z_{d}_{c}\") for d in centres for c in customers}\n";
  if (fixed)
    in.python_body +=
        "y = {(d, c): model.addVar(vtype=GRB.BINARY, name=f\"y_{d}_{c}\") for d in centres for c in customers}\n"
        "model.setObjective(gp.quicksum(inbound_cost[p][d] * x[p, d] for p in plants for d in centres)\n"
        "                   + gp.quicksum(outbound_cost[d][c] * z[d, c] for d in centres for c in customers)\n"
        "                   + gp.quicksum(link_cost[d][c] * y[d, c] for d in centres for c in customers), GRB.MINIMIZE)\n";
  else
    in.python_body +=
        "model.setObjective(gp.quicksum(inbound_cost[p][d] * x[p, d] for p in plants for d in centres)\n"
        "                   + gp.quicksum(outbound_cost[d][c] * z[d, c] for d in centres for c in customers), GRB.MINIMIZE)\n";
  in.python_body +=
      "for p in plants:\n"
      "    model.addConstr(gp.quicksum(x[p, d] for d in centres) <= supply[p], name=f\"supply_{p}\")\n"
      "for d in centres:\n"
      "    model.addConstr(gp.quicksum(x[p, d] for p in plants) - gp.quicksum(z[d, c] for c in customers) == 0, name=f\"balance_{d}\")\n";
  if (!fixed)
    in.python_body +=
        "for d in centres:\n"
        "    model.addConstr(gp.quicksum(x[p, d] for p in plants) <= throughput[d], name=f\"throughput_{d}\")\n";
  in.python_body +=
      "for c in customers:\n"
      "    model.addConstr(gp.quicksum(z[d, c] for d in centres) >= demand[c], name=f\"demand_{c}\")\n";
  if (fixed)
    in.python_body +=
        "for d in centres:\n"
        "    for c in customers:\n"
        "        model.addConstr(z[d, c] - demand[c] * y[d, c] <= 0, name=f\"link_{d}_{c}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
