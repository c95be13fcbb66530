// Job-shop family (task family: scheduling): jobs visit machines in a given order (their routes),
// each machine handles one job at a time; minimize the makespan with the disjunctive big-M model
// (start times, a precedence row per route step, two big-M rows per machine and job pair with an
// order binary, makespan rows). Variants: job_shop (a random route per job) and flow_shop (every job
// visits the machines in the same order). M is the makespan of a serial schedule (jobs one after the
// other, each operation as early as its job and machine allow): an upper bound on the optimal makespan,
// so no optimal schedule has start times further apart and the optimum is that of the model without it.
#include <algorithm>
#include <numeric>

#include "ordata/families.hpp"

namespace trex::ordata::detail {

Instance make_job_shop(Ctx& c) {
  static const int kJ[4] = {3, 3, 4, 4}, kM[4] = {2, 3, 3, 3};  // 5 x 3 and 4 x 4 take CBC seconds
  const auto& dom = c.dom;
  Instance in;
  const char* variants[] = {"job_shop", "flow_shop"};
  in.variant = variants[c.ri(0, 1)];
  in.name = "job_shop";
  bool flow = in.variant == "flow_shop";
  int nj = c.size(kJ, 0), nm = c.size(kM, 0);
  auto jobs = pick_labels(c.rng, dom.jobs, nj);
  auto machines = pick_labels(c.rng, dom.resources, nm);
  int J = in.add_set("J", "jobs", dom.job + "s", jobs);
  int K = in.add_set("K", "machines", "machines (one job at a time)", machines);

  // route[j] = machine indices in visiting order; position[j,k] = 1-based step of machine k in job j.
  std::vector<std::vector<int>> route(static_cast<size_t>(nj));
  std::vector<int> base(static_cast<size_t>(nm));
  std::iota(base.begin(), base.end(), 0);
  if (flow) c.rng.shuffle(base);
  std::vector<double> proc(size_t(nj) * size_t(nm)), pos(size_t(nj) * size_t(nm));
  double big_m = 0;
  for (int j = 0; j < nj; ++j) {
    route[size_t(j)] = base;
    if (!flow) c.rng.shuffle(route[size_t(j)]);
    for (int t = 0; t < nm; ++t) pos[size_t(j * nm + route[size_t(j)][size_t(t)])] = t + 1;
    for (int k = 0; k < nm; ++k) proc[size_t(j * nm + k)] = double(c.ri(1, 9));
  }
  {
    std::vector<double> machine_free(static_cast<size_t>(nm), 0.0);
    for (int j = 0; j < nj; ++j) {
      double t = 0;
      for (int k : route[size_t(j)]) t = machine_free[size_t(k)] = std::max(t, machine_free[size_t(k)]) + proc[size_t(j * nm + k)];
      big_m = std::max(big_m, t);
    }
  }
  in.add_param("p[j,k]", "duration", "processing time", dom.resource_unit, {J, K}, proc);
  in.add_param("o[j,k]", "step", "position of the machine in the job's route (1 = first)", "", {J, K}, pos);

  in.vars.push_back({"C", "makespan (completion time of the last operation)", "continuous, >= 0"});
  in.vars.push_back({"s[j,k]", "start time of job j on machine k", "continuous, >= 0"});
  in.vars.push_back({"y[j,l,k]", "1 if job j precedes job l on machine k (j before l in the list), else 0", "binary"});
  in.sense = lp::ObjSense::Minimize;
  in.objective_formula = "minimize C";
  in.objective_description = "makespan";
  in.objective_unit = dom.resource_unit;
  in.constraints.push_back({"route", "s[j,k'] - s[j,k] >= p[j,k]   for consecutive steps k, k' of job j", "a job's next operation starts after its previous one ends"});
  in.constraints.push_back({"before", "s[j,k] - s[l,k] + M * y[j,l,k] <= M - p[j,k]   for j < l, all k", "if j goes first on k, it ends before l starts"});
  in.constraints.push_back({"after", "s[l,k] - s[j,k] - M * y[j,l,k] <= -p[l,k]   for j < l, all k", "otherwise l ends before j starts"});
  in.constraints.push_back({"makespan", "C - s[j,k] >= p[j,k]   for the last step k of every job j", "the makespan covers every job's end"});
  in.add_param("M", "big_m", "big-M (makespan of a serial schedule, an upper bound)", dom.resource_unit, {}, {big_m});

  // Variables in order of first appearance in the LP file: C (objective), start times by route step,
  // order binaries as the machine rows use them.
  auto& m = in.model;
  m.objective.sense = lp::ObjSense::Minimize;
  m.objective.terms.push_back({m.add_var("C"), 1.0});
  std::vector<int> sv(size_t(nj) * size_t(nm));
  for (int j = 0; j < nj; ++j)
    for (int k : route[size_t(j)]) sv[size_t(j * nm + k)] = m.add_var("s_" + jobs[size_t(j)] + "_" + machines[size_t(k)]);
  for (int j = 0; j < nj; ++j)
    for (int t = 0; t + 1 < nm; ++t) {
      int k = route[size_t(j)][size_t(t)], k2 = route[size_t(j)][size_t(t + 1)];
      add_row(m, "route_" + jobs[size_t(j)] + "_" + machines[size_t(k2)], {{sv[size_t(j * nm + k)], -1.0}, {sv[size_t(j * nm + k2)], 1.0}},
              lp::RowSense::GE, proc[size_t(j * nm + k)]);
    }
  for (int k = 0; k < nm; ++k)
    for (int j = 0; j < nj; ++j)
      for (int l = j + 1; l < nj; ++l) {
        std::string tag = jobs[size_t(j)] + "_" + jobs[size_t(l)] + "_" + machines[size_t(k)];
        int y = m.add_var("y_" + tag, lp::VarType::Binary, 0, 1);
        add_row(m, "before_" + tag, {{sv[size_t(j * nm + k)], 1.0}, {sv[size_t(l * nm + k)], -1.0}, {y, big_m}}, lp::RowSense::LE,
                big_m - proc[size_t(j * nm + k)]);
        add_row(m, "after_" + tag, {{sv[size_t(l * nm + k)], 1.0}, {sv[size_t(j * nm + k)], -1.0}, {y, -big_m}}, lp::RowSense::LE,
                -proc[size_t(l * nm + k)]);
      }
  for (int j = 0; j < nj; ++j) {
    int k = route[size_t(j)].back();
    add_row(m, "makespan_" + jobs[size_t(j)], {{0, 1.0}, {sv[size_t(j * nm + k)], -1.0}}, lp::RowSense::GE, proc[size_t(j * nm + k)]);
  }

  // Narrative scenarios: a workshop, a service centre, a processing line.
  int scen = c.scenario(3);
  std::string jl = std::to_string(nj) + " " + dom.job + "s (" + label_list(jobs) + ")";
  std::string ml = std::to_string(nm) + " machines (" + label_list(machines) + ")";
  if (scen == 0)
    in.intro = capitalize(c.org()) + c.x(" {must process|has to schedule|plans} ") + jl + c.x(" on ") + ml + c.x("{| today| this " + dom.period + "}.");
  else if (scen == 1)
    in.intro = c.x("{In its workshop|On its shop floor|At its processing centre}, ") + c.org() + c.x(" {sequences|orders} ") + jl +
               c.x("; each needs every one of ") + ml + c.x(" once.");
  else
    in.intro = capitalize(c.org()) + c.x(" {wants to finish|aims to complete} ") + jl + c.x(" as early as possible; they share ") + ml + ".";
  in.rules.push_back(flow ? c.x("{Every job visits the machines in the same order|All jobs follow the same route through the machines} (the step of each machine is given), ") +
                                c.x("{and an operation starts only after the job's previous one ends.|one operation after the other.}")
                          : c.x("{Each job visits the machines in its own order|Every job has its own route through the machines} (the step of each machine is given), ") +
                                c.x("{and an operation starts only after the job's previous one ends.|one operation after the other.}"));
  in.rules.push_back(c.x("{A machine processes one job at a time, without interruption|No machine works on two jobs at once, and operations are not interrupted}."));
  in.rules.push_back(c.x("{Use the big-M value M given to model the machine orderings|The either-or machine orderings may use the given big-M value M}."));
  in.goal = c.x("{Minimize the makespan|Finish all jobs as early as possible, minimizing the makespan|Find the schedule with the smallest makespan} (in " +
                dom.resource_unit + ").");

  in.python_body =
      "model = gp.Model(\"job_shop\")\n"
      "route = {j: sorted(machines, key=lambda k: step[j][k]) for j in jobs}\n"
      "C = model.addVar(lb=0, name=\"C\")\n"
      "s = {}\n"
      "for j in jobs:\n"
      "    for k in route[j]:\n"
      "        s[j, k] = model.addVar(lb=0, name=f\"s_{j}_{k}\")\n"
      "model.setObjective(C, GRB.MINIMIZE)\n"
      "for j in jobs:\n"
      "    for a, b in zip(route[j], route[j][1:]):\n"
      "        model.addConstr(s[j, b] - s[j, a] >= duration[j][a], name=f\"route_{j}_{b}\")\n"
      "y = {}\n"
      "for k in machines:\n"
      "    for n, j in enumerate(jobs):\n"
      "        for l in jobs[n + 1:]:\n"
      "            y[j, l, k] = model.addVar(vtype=GRB.BINARY, name=f\"y_{j}_{l}_{k}\")\n"
      "            model.addConstr(s[j, k] - s[l, k] + big_m * y[j, l, k] <= big_m - duration[j][k], name=f\"before_{j}_{l}_{k}\")\n"
      "            model.addConstr(s[l, k] - s[j, k] - big_m * y[j, l, k] <= -duration[l][k], name=f\"after_{j}_{l}_{k}\")\n"
      "for j in jobs:\n"
      "    model.addConstr(C - s[j, route[j][-1]] >= duration[j][route[j][-1]], name=f\"makespan_{j}\")\n";
  return in;
}

}  // namespace trex::ordata::detail
