// Assignment family: agents to jobs with binary decisions; one-to-one cost minimisation, score
// maximisation, and the generalized assignment variant with agent capacities.
#include <cmath>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_assignment(Ctx& c) {
  static const int kN[4] = {3, 5, 8, 12};
  static const int kW[4] = {2, 3, 4, 6}, kJ[4] = {4, 6, 9, 13};
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"one_to_one", "max_score", "generalized"};
  in.variant = variants[c.ri(0, 2)];
  in.name = "assignment";
  bool gap = in.variant == "generalized", maxi = in.variant == "max_score";
  int nw, nj;
  if (gap) {
    nw = c.size(kW);
    nj = c.size(kJ);
  } else {
    nw = c.size(kN);
    nj = maxi ? nw + int(c.ri(0, 2)) : nw;
  }
  auto workers = pick_labels(c.rng, person_names(), nw);
  auto jobs = pick_labels(c.rng, dom.jobs, nj);
  int W = in.add_set("W", "workers", dom.worker + "s", workers);
  int J = in.add_set("J", "jobs", dom.job + "s", jobs);
  std::vector<double> val(size_t(nw) * size_t(nj));
  for (auto& v : val) v = double(maxi ? c.ri(20, 99) : c.ri(8, 95));
  std::string cu = dom.currency;
  if (maxi)
    in.add_param("p[w,j]", "score", "performance score", "points", {W, J}, val);
  else
    in.add_param("c[w,j]", "cost", "assignment cost", cu, {W, J}, val);
  std::vector<double> hours, cap;
  if (gap) {
    hours.resize(val.size());
    for (auto& h : hours) h = double(c.ri(2, 12));
    cap.resize(static_cast<size_t>(nw));
    double need = 0;
    for (int j = 0; j < nj; ++j) {
      double mn = 1e9;
      for (int w = 0; w < nw; ++w) mn = std::min(mn, hours[size_t(w * nj + j)]);
      need += mn;
    }
    for (auto& h : cap) h = std::ceil(need / nw * c.ru(1.3, 1.8));
    in.add_param("h[w,j]", "hours", "time needed", "hours", {W, J}, hours);
    in.add_param("H[w]", "capacity", "available time", "hours", {W}, cap);
  }

  in.vars.push_back({"x[w,j]", "1 if " + dom.worker + " w is assigned to " + dom.job + " j, else 0", "binary"});
  in.sense = maxi ? lp::ObjSense::Maximize : lp::ObjSense::Minimize;
  in.objective_formula = std::string(maxi ? "maximize" : "minimize") + " sum_{w in W} sum_{j in J} " +
                         (maxi ? "p[w,j]" : "c[w,j]") + " * x[w,j]";
  in.objective_description = maxi ? "total performance score" : "total assignment cost";
  in.objective_unit = maxi ? "points" : cu;
  if (gap) {
    in.constraints.push_back({"job", "sum_{w in W} x[w,j] = 1   for all j in J", "every " + dom.job + " gets exactly one " + dom.worker});
    in.constraints.push_back({"capacity", "sum_{j in J} h[w,j] * x[w,j] <= H[w]   for all w in W",
                              "a " + dom.worker + " cannot exceed the available time"});
  } else if (maxi) {
    in.constraints.push_back({"worker", "sum_{j in J} x[w,j] = 1   for all w in W", "every " + dom.worker + " takes exactly one " + dom.job});
    in.constraints.push_back({"job", "sum_{w in W} x[w,j] <= 1   for all j in J", "a " + dom.job + " gets at most one " + dom.worker});
  } else {
    in.constraints.push_back({"worker", "sum_{j in J} x[w,j] = 1   for all w in W", "every " + dom.worker + " takes exactly one " + dom.job});
    in.constraints.push_back({"job", "sum_{w in W} x[w,j] = 1   for all j in J", "every " + dom.job + " gets exactly one " + dom.worker});
  }

  auto& m = in.model;
  m.objective.sense = in.sense;
  for (int w = 0; w < nw; ++w)
    for (int j = 0; j < nj; ++j) {
      int v = m.add_var("x_" + workers[size_t(w)] + "_" + jobs[size_t(j)], lp::VarType::Binary, 0.0, 1.0);
      m.objective.terms.push_back({v, val[size_t(v)]});
    }
  if (!gap)
    for (int w = 0; w < nw; ++w) {
      std::vector<lp::Term> t;
      for (int j = 0; j < nj; ++j) t.push_back({w * nj + j, 1.0});
      add_row(m, "worker_" + workers[size_t(w)], t, lp::RowSense::EQ, 1.0);
    }
  for (int j = 0; j < nj; ++j) {
    std::vector<lp::Term> t;
    for (int w = 0; w < nw; ++w) t.push_back({w * nj + j, 1.0});
    add_row(m, "job_" + jobs[size_t(j)], t, maxi ? lp::RowSense::LE : lp::RowSense::EQ, 1.0);
  }
  if (gap)
    for (int w = 0; w < nw; ++w) {
      std::vector<lp::Term> t;
      for (int j = 0; j < nj; ++j) t.push_back({w * nj + j, hours[size_t(w * nj + j)]});
      add_row(m, "capacity_" + workers[size_t(w)], t, lp::RowSense::LE, cap[size_t(w)]);
    }

  in.intro = capitalize(c.org()) + c.x(" {must assign|needs to allocate|has to match} ") + std::to_string(nw) + " " +
             dom.worker + "s (" + label_list(workers) + ")" + c.x(" to {|the }") + std::to_string(nj) + " " + dom.job +
             "s (" + label_list(jobs) + ").";
  if (gap) {
    in.rules.push_back(c.x("{Every|Each} " + dom.job + " {must be handled by exactly one|is given to exactly one} ") + dom.worker + ".");
    in.rules.push_back(c.x("{A|Each} " + dom.worker + " {can take several " + dom.job + "s, but|may handle more than one " + dom.job +
                           ", yet} the time needed must not exceed {their|the} available time."));
  } else if (maxi) {
    in.rules.push_back(c.x("{Each|Every} " + dom.worker + " {takes exactly one|must be given exactly one} ") + dom.job +
                       c.x(" and {no|each} " + dom.job + " {is shared|can be covered by at most one " + dom.worker + "}."));
  } else {
    in.rules.push_back(c.x("{Each|Every} " + dom.worker + " {takes exactly one|must be given exactly one} ") + dom.job +
                       c.x(" and {each|every} " + dom.job + " {needs|is covered by} exactly one " + dom.worker + "."));
  }
  in.goal = maxi ? c.x("{Find the assignment that maximizes|Maximize} the total performance score.")
                 : c.x("{Find the assignment that minimizes the|Minimize the|Choose the assignment with the lowest} total cost (in " + cu + ").");

  std::string table = maxi ? "score" : "cost";
  in.python_body =
      "model = gp.Model(\"assignment\")\n"
      "x = {}\n"
      "for w in workers:\n"
      "    for j in jobs:\n"
      "        x[w, j] = model.addVar(vtype=GRB.BINARY, name=f\"x_{w}_{j}\")\n"
      "model.setObjective(gp.quicksum(" + table + "[w][j] * x[w, j] for w in workers for j in jobs), " +
      (maxi ? "GRB.MAXIMIZE" : "GRB.MINIMIZE") + ")\n";
  if (!gap)
    in.python_body +=
        "for w in workers:\n"
        "    model.addConstr(gp.quicksum(x[w, j] for j in jobs) == 1, name=f\"worker_{w}\")\n";
  in.python_body += std::string("for j in jobs:\n") +
                    "    model.addConstr(gp.quicksum(x[w, j] for w in workers) " + (maxi ? "<=" : "==") +
                    " 1, name=f\"job_{j}\")\n";
  if (gap)
    in.python_body +=
        "for w in workers:\n"
        "    model.addConstr(gp.quicksum(hours[w][j] * x[w, j] for j in jobs) <= capacity[w], name=f\"capacity_{w}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
