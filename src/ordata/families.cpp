// Family dispatch and the helpers shared by the generators.
#include "ordata/families.hpp"

#include <cmath>

#include "util/error.hpp"

namespace trex::ordata {

namespace detail {

std::vector<double> random_distances(Rng& rng, int n, int m, double scale, double offset) {
  std::vector<double> ax(static_cast<size_t>(n)), ay(static_cast<size_t>(n)), bx(static_cast<size_t>(m)), by(static_cast<size_t>(m));
  for (int i = 0; i < n; ++i) ax[size_t(i)] = rng.uniform(0, 100), ay[size_t(i)] = rng.uniform(0, 100);
  for (int j = 0; j < m; ++j) bx[size_t(j)] = rng.uniform(0, 100), by[size_t(j)] = rng.uniform(0, 100);
  std::vector<double> d(size_t(n) * size_t(m));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) {
      double e = std::hypot(ax[size_t(i)] - bx[size_t(j)], ay[size_t(i)] - by[size_t(j)]);
      d[size_t(i) * size_t(m) + size_t(j)] = std::max(1.0, std::round(offset + e * scale));
    }
  return d;
}

std::string python_bindings(const Instance& inst) {
  std::string s;
  for (const auto& set : inst.sets) s += set.key + " = data[\"" + set.key + "\"]\n";
  for (const auto& p : inst.params) s += p.key + " = data[\"" + p.key + "\"]\n";
  return s;
}

void finish_instance(Instance& inst, Difficulty difficulty, int domain, uint64_t seed) {
  inst.difficulty = difficulty;
  inst.domain = domain;
  inst.seed = seed;
  inst.model.name = inst.name;
  inst.model.rebuild_index();
}

void add_degree_rows(lp::Model& m, const std::vector<int>& xv, const std::vector<std::string>& locs, bool vrp) {
  const int n = int(locs.size());
  for (int i = (vrp ? 1 : 0); i < n; ++i) {
    std::vector<lp::Term> t;
    for (int j = 0; j < n; ++j)
      if (i != j) t.push_back({xv[size_t(i * n + j)], 1.0});
    add_row(m, (vrp ? "leave_" : "out_") + locs[size_t(i)], t, lp::RowSense::EQ, 1.0);
  }
  for (int j = (vrp ? 1 : 0); j < n; ++j) {
    std::vector<lp::Term> t;
    for (int i = 0; i < n; ++i)
      if (i != j) t.push_back({xv[size_t(i * n + j)], 1.0});
    add_row(m, (vrp ? "visit_" : "in_") + locs[size_t(j)], t, lp::RowSense::EQ, 1.0);
  }
}

std::string label_list(const std::vector<std::string>& labels) {
  std::vector<std::string> r;
  r.reserve(labels.size());
  for (const auto& l : labels) r.push_back(readable(l));
  return join_list(r);
}

}  // namespace detail

Instance generate(Structure structure, Difficulty difficulty, int domain, uint64_t seed) {
  Rng rng(seed);
  const auto& doms = domains();
  if (domain < 0 || domain >= int(doms.size())) throw Error("ordata: domain index out of range");
  detail::Ctx c{rng, difficulty, doms[size_t(domain)], {}, -1};
  Instance inst;
  switch (structure) {
    case Structure::Assignment: inst = detail::make_assignment(c); break;
    case Structure::Scheduling: inst = detail::make_scheduling(c); break;
    case Structure::Routing: inst = detail::make_routing(c); break;
    case Structure::Transportation: inst = detail::make_transportation(c); break;
    case Structure::Blending: inst = detail::make_blending(c); break;
    case Structure::CapacityPlanning: inst = detail::make_capacity_planning(c); break;
    case Structure::FacilityLocation: inst = detail::make_facility_location(c); break;
    case Structure::ProductionPlanning: inst = detail::make_production_planning(c); break;
    case Structure::Portfolio: inst = detail::make_portfolio(c); break;
    case Structure::GenericLpMip: inst = detail::make_generic(c); break;
    case Structure::Knapsack: inst = detail::make_knapsack(c); break;
    case Structure::SetCover: inst = detail::make_set_cover(c); break;
    case Structure::NetworkFlow: inst = detail::make_network_flow(c); break;
    case Structure::Diet: inst = detail::make_diet(c); break;
    case Structure::UnitCommitment: inst = detail::make_unit_commitment(c); break;
    case Structure::RevenueManagement: inst = detail::make_revenue(c); break;
    case Structure::BinPacking: inst = detail::make_bin_packing(c); break;
    case Structure::JobShop: inst = detail::make_job_shop(c); break;
    case Structure::Dispersion: inst = detail::make_dispersion(c); break;
    case Structure::SupplyChain: inst = detail::make_supply_chain(c); break;
    case Structure::Marketing: inst = detail::make_marketing(c); break;
    case Structure::Agriculture: inst = detail::make_agriculture(c); break;
    case Structure::Deployment: inst = detail::make_deployment(c); break;
    case Structure::Rostering: inst = detail::make_rostering(c); break;
    case Structure::RoutingFlow: inst = detail::make_routing_flow(c); break;
    case Structure::NetworkDesign: inst = detail::make_network_design(c); break;
    case Structure::LocationAllocation: inst = detail::make_location_allocation(c); break;
  }
  inst.structure = structure;
  inst.narrative = c.narrative;
  inst.phrasing = std::move(c.phrasing);
  detail::finish_instance(inst, difficulty, domain, seed);
  return inst;
}

namespace {
std::vector<FamilyInfo> make_registry() {
  using S = Structure;
  std::vector<FamilyInfo> r = {
      {S::Assignment, true,
       {{"one_to_one", "assignment", "min sum c[i,j] x[i,j]; sum_j x[i,j] = 1, sum_i x[i,j] = 1; x binary"},
        {"max_score", "assignment", "max sum s[i,j] x[i,j]; each worker exactly one job, each job at most one worker; x binary"},
        {"generalized", "assignment", "min sum c[i,j] x[i,j]; each job one agent; sum_j h[i,j] x[i,j] <= H[i]; x binary"}}, {}},
      {S::Scheduling, true,
       {{"shift_cover", "scheduling", "min sum c[s] n[s]; sum_{s covering t} n[s] >= r[t]; n integer"},
        {"shift_cover_capped", "scheduling", "shift_cover with n[s] <= m[s]"},
        {"weekly_roster", "workforce planning", "min staff; cyclic runs of 5 (or 4) consecutive days cover daily demand; integer"}}, {}},
      {S::Routing, true,
       {{"tsp_mtz", "routing", "min sum d[i,j] x[i,j]; in/out degree 1; MTZ u[i] - u[j] + n x[i,j] <= n - 1; x binary"},
        {"cvrp_mtz", "routing", "min distance; fleet size at the depot; load-based MTZ rows with vehicle capacity; x binary"}}, {}},
      {S::Transportation, true,
       {{"basic", "transportation", "min sum c[i,j] x[i,j]; sum_j x[i,j] <= s[i]; sum_i x[i,j] >= d[j]"},
        {"integer", "transportation", "basic with integer shipments"},
        {"route_limits", "transportation", "basic with 0 <= x[i,j] <= u[i,j]"}}, {}},
      {S::Blending, true,
       {{"fixed_batch", "blending", "min cost; sum x = B; percent bounds on attributes times B; availability bounds"},
        {"integer_batch", "blending", "fixed_batch with integer amounts"},
        {"ratio", "blending", "no fixed batch; linearised ratio rows (a - lo) x >= 0"}}, {}},
      {S::CapacityPlanning, true,
       {{"product_mix", "production planning", "max sum p[i] x[i]; sum_i a[r,i] x[i] <= b[r]"},
        {"integer_mix", "production planning", "product_mix with integer quantities"},
        {"expansion", "production planning", "product_mix plus integer capacity blocks at a cost"}}, {}},
      {S::FacilityLocation, true,
       {{"capacitated", "facility location", "min f y + c x; demand rows; sum_j x[i,j] <= k[i] y[i]; y binary"},
        {"uncapacitated", "facility location", "min f y + c x; demand rows; x[i,j] <= d[j] y[i]; y binary"},
        {"single_source", "facility location", "min f y + c d z; sum_i z[i,j] = 1; capacity with y; z, y binary"}}, {}},
      {S::ProductionPlanning, true,
       {{"inventory", "production planning", "multi-period: I[t-1] + x[t] - d[t] = I[t]; capacity; production and holding cost"},
        {"setup", "lot sizing", "inventory with binary setups: x[p,t] <= M y[p,t], setup costs"},
        {"ending_stock", "production planning", "inventory with a required ending stock"}}, {}},
      {S::Portfolio, true,
       {{"linear", "portfolio", "max expected return; budget; per-option cap; average-risk row"},
        {"cardinality_milp", "portfolio", "linear with selection binaries, minimum investment, fee and at most K options"}}, {}},
      {S::GenericLpMip, true,
       {{"max_le", "generic", "max c x; A x <= b"},
        {"min_ge", "generic", "min c x; A x >= b"},
        {"mixed_integer", "generic", "max_le/min_ge with integrality flags in the data"}}, {}},
      {S::Knapsack, false,
       {{"binary", "packing", "max sum v[i] x[i]; sum w[i] x[i] <= W; x binary"},
        {"multidimensional", "packing", "max sum v[i] x[i]; sum_i w[r,i] x[i] <= W[r] for every resource r; x binary"},
        {"bounded", "packing", "max sum v[i] x[i]; sum w[i] x[i] <= W; 0 <= x[i] <= u[i] integer"}},
       {"The capacity row sums weight times the decision over every item; the value only counts items taken.",
        "Items are indivisible: the decisions are binary (or integer copies up to their limit), not fractions."}},
      {S::SetCover, false,
       {{"cover", "covering", "min sum c[i] x[i]; sum_i a[i,j] x[i] >= 1 for every element j; x binary"},
        {"multi_cover", "covering", "min sum c[i] x[i]; sum_i a[i,j] x[i] >= r[j]; x binary"},
        {"partition", "covering", "min sum c[i] x[i]; sum_i a[i,j] x[i] = 1 (set partitioning); x binary"}},
       {"Each element gets its own row summing only the options that cover it.",
        "Covering uses >= rows; partitioning (every element exactly once) uses = rows, which may make cheap options unusable."}},
      {S::NetworkFlow, false,
       {{"min_cost_flow", "network flow", "min sum c[a] x[a]; out(n) - in(n) = b[n] at every node; 0 <= x[a] <= u[a]"},
        {"max_flow", "network flow", "max out(s) - in(s); out(n) - in(n) = 0 at intermediate nodes; 0 <= x[a] <= u[a]"}},
       {"Flow conservation is one equality row per node: outflow minus inflow equals the node's net supply.",
        "Only listed links carry flow; a capacity of 0 means there is no link, not an unlimited one."}},
      {S::Diet, false,
       {{"continuous", "diet", "min sum c[f] x[f]; L[k] <= sum_f a[k,f] x[f] <= U[k] for every nutrient k; x >= 0"},
        {"integer_servings", "diet", "continuous with integer servings 0 <= x[f] <= m[f]"}},
       {"Requirements are totals over all foods: each nutrient row sums content times amount.",
        "Lower and upper limits are separate rows (or one range); dropping the upper one lets cheap foods dominate."}},
      {S::UnitCommitment, false,
       {{"commitment", "energy", "min sum f u + c q; sum_g q[g,t] >= D[t]; p[g] u[g,t] <= q[g,t] <= P[g] u[g,t]; u binary"},
        {"startup", "energy", "commitment plus start-up binaries v[g,t] >= u[g,t] - u[g,t-1] (all off before t = 1) at a cost"}},
       {"Output is linked to the on/off decision in both directions: q <= P u (off means nothing) and q >= p u (minimum run level).",
        "A start-up is a switch from off to on: v[g,t] >= u[g,t] - u[g,t-1], with the state before the first period given."}},
      {S::RevenueManagement, false,
       {{"booking_limits", "revenue management", "max sum r[j] x[j]; sum_j a[l,j] x[j] <= C[l]; 0 <= x[j] <= D[j]"},
        {"integer_bookings", "revenue management", "booking_limits with integer x"},
        {"contract_minimums", "contract allocation", "booking_limits with committed minimum sales m[j] <= x[j]"}},
       {"A product that needs two resources appears in both capacity rows.",
        "Demand forecasts are upper bounds on sales, not requirements; committed minimums are lower bounds."}},
      {S::BinPacking, false,
       {{"bin_packing", "packing", "min sum y[b]; sum_b x[i,b] = 1; sum_i s[i] x[i,b] <= W y[b]; x[i,b] <= y[b]; y[b] >= y[b+1]; x, y binary"},
        {"cutting_stock", "cutting stock", "min sum y[b]; sum_b x[i,b] >= d[i]; sum_i s[i] x[i,b] <= W y[b]; x[i,b] <= d[i] y[b]; y[b] >= y[b+1]; x integer, y binary"}},
       {"The capacity row multiplies the capacity by y[b], so nothing goes into an unused bin.",
        "Identical bins are interchangeable; ordering rows y[b] >= y[b+1] cut the symmetric solutions without changing the optimum."}},
      {S::JobShop, false,
       {{"job_shop", "scheduling", "min C; s[j,k'] >= s[j,k] + p[j,k] along each route; big-M disjunctions per machine and job pair (M: a serial schedule's makespan); C >= last end"},
        {"flow_shop", "scheduling", "job_shop with the same route for every job"}},
       {"Each machine and job pair needs both disjunctive rows with one order binary; one row alone forces a fixed order.",
        "The big-M must bound the start-time differences of an optimal schedule: any feasible schedule's makespan does."}},
      {S::Dispersion, false,
       {{"max_min", "dispersion", "max D; sum y = p; D + M y[i] + M y[j] <= d[i,j] + 2M for i < j; y binary"},
        {"max_sum", "dispersion", "max sum d[i,j] z[i,j]; sum y = p; z[i,j] <= y[i], z[i,j] <= y[j]; sum_j z[i,j] = (p-1) y[i]; y binary"}},
       {"Max-min needs a row for every pair, relaxed by big-M unless both sites are chosen.",
        "In max-sum the pair variable needs both upper links; maximization drives it to min(y[i], y[j])."}},
      {S::SupplyChain, false,
       {{"two_echelon", "supply chain", "min a x + b z; sum_d x[p,d] <= s[p]; sum_p x[p,d] = sum_c z[d,c]; sum_p x[p,d] <= k[d]; sum_d z[d,c] >= q[c]"},
        {"fixed_charge", "network design", "two_echelon without throughput limits, plus link binaries: z[d,c] <= q[c] y[d,c], fixed cost g y"}},
       {"Each distribution centre needs a balance row: inflow from the plants equals outflow to the customers.",
        "Fixed-charge links need a big-M on the flow; the customer's demand is the tightest valid one."}},
      {S::Marketing, false,
       {{"media_mix", "marketing", "max sum r[k] n[k]; sum c[k] n[k] <= B; sum a[k] n[k] >= A; 0 <= n[k] <= u[k] (LP)"},
        {"reach_target", "marketing", "min sum c[k] n[k]; sum r[k] n[k] >= R; sum a[k] n[k] >= A; 0 <= n[k] <= u[k] (LP)"}},
       {"Reach and cost are per advertisement: every row multiplies them by the number placed in the channel.",
        "The channel limits are variable bounds; the audience minimum is a separate >= row."}},
      {S::Agriculture, false,
       {{"crop_mix", "agriculture", "max sum p[c] a[c]; sum a <= L; sum w[c] a[c] <= W; sum h[c] a[c] <= H; lo[c] <= a[c] <= hi[c] (LP)"},
        {"crop_rotation", "agriculture", "max sum p[c] A[f] x[f,c,t]; sum_c x[f,c,t] <= 1; x[f,c,t] + x[f,c,t-1] <= 1 (x[f,c,0] = g[f,c]); per season >= K staple fields and <= R irrigated fields; x binary"}},
       {"Every resource row multiplies the per-hectare use by the area; land, water and labour are separate rows over all crops.",
        "The rotation rule links consecutive seasons of the same field and crop, and the first season links to last season's crops (data, not variables)."}},
      {S::Deployment, false,
       {{"team_deployment", "deployment", "min sum c[i] n[i]; sum_{i: t[i,j] <= Tmax} y[i,j] >= d[j]; sum_j y[i,j] <= Q n[i]; 0 <= n[i] <= k[i] integer"},
        {"coverage_deployment", "deployment", "max sum y[i,j]; sum c n <= B; sum_i y[i,j] <= d[j]; sum_j y[i,j] <= Q n[i]; 0 <= n[i] <= k[i] integer"},
        {"phased_deployment", "deployment", "max sum v[s] z[s,t]; z[s,t-1] <= z[s,t]; sum_s c[s] (z[s,t] - z[s,t-1]) <= B[t]; z[s,t] <= z[r,t] if s requires r; z binary"}},
       {"Only base-region pairs within the response time get an allocation variable; the units' capacity row links the served workload to the integer units deployed.",
        "In a phased roll-out the cost falls when a site is first deployed: the budget row charges z[s,t] - z[s,t-1], not z[s,t]."}},
      {S::Rostering, false,
       {{"nurse_roster", "workforce planning", "min sum c[e,s] x[e,d,s]; sum_e x[e,d,s] >= r[d,s]; sum_s x[e,d,s] <= 1; sum_{d,s} x <= m[e]; x[e,d-1,night] + x[e,d,first] <= 1; x binary"},
        {"skill_roster", "workforce planning", "nurse_roster plus sum_e q[e] x[e,d,s] >= K on every shift (qualified staff)"},
        {"preference_roster", "workforce planning", "min sum (p[e,s] + w[e,d]) x[e,d,s]; nurse_roster rows plus sum_{d,s} x[e,d,s] >= n[e]"}},
       {"Each employee, day and shift is one binary; coverage sums over employees, the one-shift-a-day and horizon limits sum over shifts and days.",
        "The rest rule pairs the night shift of one day with the first shift of the next; it is one row per employee and consecutive day pair, not per day."}},
      {S::RoutingFlow, false,
       {{"tsp_scf", "routing", "min sum d[i,j] x[i,j]; in/out degree 1; single-commodity flow: depot sends n-1, others keep 1; f[i,j] <= (n-1) x[i,j]; x binary"},
        {"cvrp_scf", "routing", "min distance; customers entered/left once; at most K vehicles; load flow: depot sends sum q, customer k unloads q[k]; f[i,j] <= Q x[i,j]; x binary"}},
       {"The flow replaces the MTZ order variables: a subtour that skips the depot would need flow it never receives, so conservation rules it out.",
        "The linking row f[i,j] <= (n-1) x[i,j] (or Q x[i,j]) is what ties the flow to the chosen arcs; without it the flow goes anywhere and subtours return."}},
      {S::NetworkDesign, false,
       {{"capacitated_mc", "network design", "min sum g y + sum c x; out - in = b[k,n] per commodity and node; sum_k x[k,a] <= u[a] y[a]; y binary"},
        {"strong_linking", "network design", "capacitated_mc plus the strong linking x[k,a] <= q[k] y[a] (same optimum, tighter relaxation)"}},
       {"Conservation is one row per commodity and node: each commodity keeps its own flow variables; summing them first would let one commodity's supply meet another's demand.",
        "The capacity row multiplies the capacity by y: one row both limits the flow and charges the fixed cost; the strong rows x[k,a] <= q[k] y[a] only tighten the relaxation."}},
      {S::LocationAllocation, false,
       {{"p_median", "facility location", "min sum w[j] d[i,j] x[i,j]; sum y = p; sum_i x[i,j] = 1; x[i,j] <= y[i]; x, y binary"},
        {"p_center", "facility location", "min D; sum y = p; sum_i x[i,j] = 1; x[i,j] <= y[i]; sum_i d[i,j] x[i,j] <= D; x, y binary"},
        {"capacitated_allocation", "facility location", "min sum w[j] d[i,j] x[i,j]; sum y = p; sum_i x[i,j] = 1; sum_j w[j] x[i,j] <= k[i] y[i]; 0 <= x <= 1, y binary"}},
       {"Exactly p sites is an equality row on the opening binaries; the allocation rows x[i,j] <= y[i] (or the capacity rows) keep customers off closed sites.",
        "In p-center the objective is a variable D bounded below by every customer's distance, not a sum of distances."}},
  };
  return r;
}
}  // namespace

const FamilyInfo& family_info(Structure structure) {
  static const std::vector<FamilyInfo> kRegistry = make_registry();
  for (const auto& f : kRegistry)
    if (f.structure == structure) return f;
  throw Error(std::string("ordata: no registry entry for structure ") + to_string(structure));
}

std::vector<std::string> family_variants(Structure structure) {
  std::vector<std::string> v;
  for (const auto& g : family_info(structure).generators) v.push_back(g.variant);
  return v;
}

}  // namespace trex::ordata
