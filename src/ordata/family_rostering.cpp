// Rostering family (task family: workforce planning): a named-staff roster over a few days, beyond the
// anonymous weekly roster of the scheduling family. x[e,d,s] = 1 if employee e works shift s on day d
// (shifts Day/Night or Early/Late/Night). Every variant: each day and shift has at least its required
// staff (sum_e x[e,d,s] >= r[d,s]); nobody works two shifts on one day (sum_s x[e,d,s] <= 1); at most
// m[e] shifts per employee over the horizon; the rest rule: no first (early) shift right after a night
// shift (x[e,d-1,night] + x[e,d,first] <= 1).
// nurse_roster: minimize the wage cost sum c[e,s] x[e,d,s] (night and late shifts pay a premium).
// skill_roster: nurse_roster plus at least K qualified employees (q[e] = 1) on every shift; qualified
// staff cost more. preference_roster: each employee works at least n[e] shifts (the contract) and the
// objective is the total penalty of the roster: the employee's dislike of the shift p[e,s] plus the
// penalty w[e,d] of working on a requested day off. Requirements and limits are set around a planted
// roster that keeps every rule, so every draw is feasible.
#include <algorithm>
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_rostering(Ctx& c) {
  static const int kE[4] = {4, 5, 6, 7}, kD[4] = {3, 4, 5, 7}, kS[4] = {2, 3, 3, 3};
  static const std::vector<std::string> kDays = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"nurse_roster", "skill_roster", "preference_roster"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "rostering";
  bool skill = in.variant == "skill_roster", pref = in.variant == "preference_roster";
  int ne = c.size(kE), nd = kD[c.level()], ns = kS[c.level()];
  auto emps = pick_labels(c.rng, person_names(), ne);
  std::vector<std::string> days(kDays.begin(), kDays.begin() + nd);
  std::vector<std::string> shifts = ns == 2 ? std::vector<std::string>{"Day", "Night"} : std::vector<std::string>{"Early", "Late", "Night"};
  int E = in.add_set("E", "employees", dom.staff, emps);
  int D = in.add_set("D", "days", "days", days);
  int S = in.add_set("S", "shifts", "shifts (the last is the night shift)", shifts);

  // Planted roster: work[e,d] = the shift worked (-1: off). In skill_roster employee qual[s] is qualified
  // and works shift s every day (the same shift every day never breaks the rest rule).
  std::vector<int> work(size_t(ne) * size_t(nd), -1), order(static_cast<size_t>(ne));
  for (int e = 0; e < ne; ++e) order[size_t(e)] = e;
  c.rng.shuffle(order);
  std::vector<double> qual(size_t(ne), 0.0), req(size_t(nd) * size_t(ns), 0.0), count(size_t(ne), 0.0);
  if (skill) {
    for (int s = 0; s < ns; ++s) qual[size_t(order[size_t(s)])] = 1.0;
    if (c.rng.uniform() < 0.5) qual[size_t(order[size_t(ns)])] = 1.0;
  }
  auto available = [&](int e, int d, int s) {
    return work[size_t(e * nd + d)] < 0 && !(s == 0 && d > 0 && work[size_t(e * nd + d - 1)] == ns - 1);
  };
  auto assign = [&](int e, int d, int s) { work[size_t(e * nd + d)] = s, req[size_t(d * ns + s)] += 1, count[size_t(e)] += 1; };
  for (int d = 0; d < nd; ++d) {
    if (skill)
      for (int s = 0; s < ns; ++s) assign(order[size_t(s)], d, s);
    for (int round = 0; round < 2; ++round)  // one person per shift, then a second on some shifts
      for (int s = 0; s < ns; ++s) {
        if (round == 0 ? req[size_t(d * ns + s)] > 0 : c.rng.uniform() < 0.45) continue;
        std::vector<int> cand;
        for (int e = 0; e < ne; ++e)
          if (available(e, d, s)) cand.push_back(e);
        if (!cand.empty()) assign(c.rng.pick(cand), d, s);
      }
  }
  for (auto& r : req)
    if (r >= 2 && c.rng.uniform() < 0.3) r -= 1;
  std::vector<double> most(static_cast<size_t>(ne)), least(static_cast<size_t>(ne)), cost(size_t(ne) * size_t(ns)), dislike(size_t(ne) * size_t(ns)),
      dayoff(size_t(ne) * size_t(nd), 0.0);
  for (int e = 0; e < ne; ++e) {
    most[size_t(e)] = std::clamp(count[size_t(e)] + double(c.ri(0, 1)), 1.0, double(nd));
    least[size_t(e)] = std::max(0.0, count[size_t(e)] - double(c.ri(0, 1)));
    double wage = double(c.ri(18, 32) * 5) * (qual[size_t(e)] != 0.0 ? 1.25 : 1.0);
    for (int s = 0; s < ns; ++s) {
      double premium = s == ns - 1 ? 1.3 : (s == 1 ? 1.1 : 1.0);  // night, late
      cost[size_t(e * ns + s)] = std::round(wage * premium);
      dislike[size_t(e * ns + s)] = double(c.ri(0, 4));
    }
    for (int d = 0; d < nd; ++d)
      if (c.rng.uniform() < 0.2) dayoff[size_t(e * nd + d)] = double(c.ri(5, 9));
  }
  std::string cu = dom.currency;
  if (pref) {
    in.add_param("p[e,s]", "dislike", "dislike of the shift (penalty points per shift worked)", "points", {E, S}, dislike);
    in.add_param("w[e,d]", "day_off", "penalty for working on a requested day off (0: no request)", "points", {E, D}, dayoff);
  } else {
    in.add_param("c[e,s]", "cost", "wage cost of one shift", cu, {E, S}, cost);
  }
  in.add_param("r[d,s]", "required", "staff required", dom.staff, {D, S}, req);
  in.add_param("m[e]", "max_shifts", "most shifts over the horizon", "shifts", {E}, most);
  if (pref) in.add_param("n[e]", "min_shifts", "contracted minimum shifts over the horizon", "shifts", {E}, least);
  if (skill) {
    in.add_param("q[e]", "qualified", "qualification (1: a qualified senior)", "", {E}, qual);
    in.add_param("K", "min_qualified", "qualified employees required on every shift", dom.staff, {}, {1.0});
  }

  in.vars.push_back({"x[e,d,s]", "1 if employee e works shift s on day d, else 0", "binary"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = pref ? "minimize sum_{e,d,s} (p[e,s] + w[e,d]) * x[e,d,s]" : "minimize sum_{e,d,s} c[e,s] * x[e,d,s]";
  in.objective_description = pref ? "total preference penalty" : "total wage cost";
  in.objective_unit = pref ? "points" : cu;
  in.constraints.push_back({"cover", "sum_{e in E} x[e,d,s] >= r[d,s]   for all d in D, s in S", "every shift has its required staff"});
  if (skill) in.constraints.push_back({"qualified", "sum_{e in E} q[e] * x[e,d,s] >= K   for all d, s", "every shift has enough qualified staff"});
  in.constraints.push_back({"one_shift", "sum_{s in S} x[e,d,s] <= 1   for all e in E, d in D", "nobody works two shifts on one day"});
  in.constraints.push_back({"max_shifts", "sum_{d,s} x[e,d,s] <= m[e]   for all e in E", "nobody works more than their maximum"});
  if (pref) in.constraints.push_back({"min_shifts", "sum_{d,s} x[e,d,s] >= n[e]   for all e in E", "everyone works their contracted minimum"});
  in.constraints.push_back({"rest", "x[e,d-1,night] + x[e,d,first] <= 1   for all e, d > 1", "no early shift right after a night shift"});

  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  auto idx = [&](int e, int d, int s) { return (e * nd + d) * ns + s; };
  for (int e = 0; e < ne; ++e)
    for (int d = 0; d < nd; ++d)
      for (int s = 0; s < ns; ++s)
        m.objective.terms.push_back({m.add_var("x_" + emps[size_t(e)] + "_" + days[size_t(d)] + "_" + shifts[size_t(s)], lp::VarType::Binary, 0, 1),
                                     pref ? dislike[size_t(e * ns + s)] + dayoff[size_t(e * nd + d)] : cost[size_t(e * ns + s)]});
  for (int d = 0; d < nd; ++d)
    for (int s = 0; s < ns; ++s) {
      std::vector<lp::Term> all, qualified;
      for (int e = 0; e < ne; ++e) all.push_back({idx(e, d, s), 1.0}), qualified.push_back({idx(e, d, s), qual[size_t(e)]});
      add_row(m, "cover_" + days[size_t(d)] + "_" + shifts[size_t(s)], all, lp::RowSense::GE, req[size_t(d * ns + s)]);
      if (skill) add_row(m, "qualified_" + days[size_t(d)] + "_" + shifts[size_t(s)], qualified, lp::RowSense::GE, 1.0);
    }
  for (int e = 0; e < ne; ++e) {
    std::vector<lp::Term> total;
    for (int d = 0; d < nd; ++d) {
      std::vector<lp::Term> day;
      for (int s = 0; s < ns; ++s) day.push_back({idx(e, d, s), 1.0}), total.push_back({idx(e, d, s), 1.0});
      add_row(m, "one_shift_" + emps[size_t(e)] + "_" + days[size_t(d)], day, lp::RowSense::LE, 1.0);
    }
    add_row(m, "max_shifts_" + emps[size_t(e)], total, lp::RowSense::LE, most[size_t(e)]);
    if (pref) add_row(m, "min_shifts_" + emps[size_t(e)], total, lp::RowSense::GE, least[size_t(e)]);
    for (int d = 1; d < nd; ++d)
      add_row(m, "rest_" + emps[size_t(e)] + "_" + days[size_t(d)], {{idx(e, d - 1, ns - 1), 1.0}, {idx(e, d, 0), 1.0}}, lp::RowSense::LE, 1.0);
  }

  // Narrative scenarios: a hospital ward, a control room, a fairness-minded team roster.
  int scen = c.scenario(3);
  std::string el = std::to_string(ne) + " " + dom.staff + " (" + label_list(emps) + ")";
  std::string dl = std::to_string(nd) + " days (" + days.front() + " to " + days.back() + ")";
  std::string sl = std::to_string(ns) + " shifts a day (" + label_list(shifts) + ")";
  if (scen == 0)
    in.intro = capitalize(c.org()) + c.x(" {draws up|prepares|builds} the roster of ") + el + c.x(" for the next ") + dl + c.x(", with ") + sl + ".";
  else if (scen == 1)
    in.intro = c.x("{Around the clock|Day and night}, ") + c.org() + c.x(" {must staff|has to cover} ") + sl + c.x(" over the next ") + dl +
               c.x("; {it has|the team consists of} ") + el + ".";
  else
    in.intro = capitalize(c.org()) + c.x(" {assigns|allocates} ") + sl + c.x(" to ") + el + c.x(" for ") + dl +
               c.x(" {and wants a roster that respects the working-time rules|within the rules agreed with the staff}.");
  in.rules.push_back(c.x("{Every shift of every day needs at least its required staff|On each day, each shift must be staffed with at least the required number}") +
                     c.x("{, and nobody works more than one shift a day.|; an employee works at most one shift per day.}"));
  in.rules.push_back(c.x("{Nobody may work more than their maximum number of shifts over the horizon|Each employee works at most their maximum number of shifts in total}") +
                     (pref ? c.x("{, and at least their contracted minimum.|; the contracted minimum number of shifts must also be worked.}") : std::string(".")));
  in.rules.push_back(c.x("{After a night shift an employee may not work the " + shifts[0] + " shift the next day|"
                         "A night shift may not be followed by the " + shifts[0] + " shift on the following day}."));
  if (skill)
    in.rules.push_back(c.x("{Every shift needs at least the required number of qualified employees|On every shift at least the minimum number of qualified staff must work}."));
  in.goal = pref ? c.x("{Minimize|Find the roster that minimizes|Build the roster with the smallest} total preference penalty (disliked shifts plus worked days-off requests, in points).")
                 : c.x("{Minimize|Find the roster that minimizes|Build the roster with the lowest} total wage cost (in " + cu + ").");

  in.python_body =
      "model = gp.Model(\"rostering\")\n"
      "x = {}\n"
      "for e in employees:\n"
      "    for d in days:\n"
      "        for s in shifts:\n"
      "            x[e, d, s] = model.addVar(vtype=GRB.BINARY, name=f\"x_{e}_{d}_{s}\")\n";
  in.python_body += pref ? "model.setObjective(gp.quicksum((dislike[e][s] + day_off[e][d]) * x[e, d, s] for e in employees for d in days for s in shifts), GRB.MINIMIZE)\n"
                         : "model.setObjective(gp.quicksum(cost[e][s] * x[e, d, s] for e in employees for d in days for s in shifts), GRB.MINIMIZE)\n";
  in.python_body +=
      "for d in days:\n"
      "    for s in shifts:\n"
      "        model.addConstr(gp.quicksum(x[e, d, s] for e in employees) >= required[d][s], name=f\"cover_{d}_{s}\")\n";
  if (skill)
    in.python_body +=
        "        model.addConstr(gp.quicksum(qualified[e] * x[e, d, s] for e in employees) >= min_qualified, name=f\"qualified_{d}_{s}\")\n";
  in.python_body +=
      "for e in employees:\n"
      "    for d in days:\n"
      "        model.addConstr(gp.quicksum(x[e, d, s] for s in shifts) <= 1, name=f\"one_shift_{e}_{d}\")\n"
      "    model.addConstr(gp.quicksum(x[e, d, s] for d in days for s in shifts) <= max_shifts[e], name=f\"max_shifts_{e}\")\n";
  if (pref)
    in.python_body += "    model.addConstr(gp.quicksum(x[e, d, s] for d in days for s in shifts) >= min_shifts[e], name=f\"min_shifts_{e}\")\n";
  in.python_body +=
      "    for a, b in zip(days, days[1:]):\n"
      "        model.addConstr(x[e, a, shifts[-1]] + x[e, b, shifts[0]] <= 1, name=f\"rest_{e}_{b}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
