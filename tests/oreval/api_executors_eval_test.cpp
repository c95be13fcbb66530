// `trex eval --responses` picks each code answer's executor from its imports (issue #25 point 4): coptpy answers run
// on trex's coptpy layer, PuLP answers on Debian's python3-pulp with /usr/bin/cbc (python/trex_pulp), gurobipy
// answers on the gurobipy layer; a modelling package trex does not run is `unsupported_api` naming it; results.jsonl
// records the API; CBC's infeasible verdicts of PuLP answers are re-solved by trex (issue #25 point 5). The same
// through the fork server and through a fresh interpreter per answer (--no-forkserver).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <vector>

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/jsonl.hpp"
#include "benchmarks_dir.hpp"

namespace fs = std::filesystem;

namespace {

std::string fenced(const std::string& code) { return "Here is the model.\n```python\n" + code + "```\n"; }

// ORLM's answer shape: max 3x + 2y, x + y <= 4, x + 3y <= 6, x <= 3 (x, y >= 0): 11 at (3, 1).
const char* kCoptOrlm = R"(import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Production")
x = model.addVar(lb=0, ub=3, name="x")
y = model.addVar(lb=0, name="y")
model.addConstr(x + y <= 4, name="c1")
model.addConstr(x + 3 * y <= 6, name="c2")
model.setObjective(3 * x + 2 * y, sense=COPT.MAXIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print("Optimal objective value:", model.objval)
    print("x =", x.x, "y =", y.x)
)";

// Integer knapsack with addVars / quicksum and no solve() call (the harness solves it): max 3a + 5b, 2a + 3b <= 12,
// a, b integer in [0, 5] -> 20 at (0, 4); the next best are (3, 2) with 19 and (6, 0) out of bounds.
const char* kCoptUnsolved = R"(import coptpy as cp
from coptpy import COPT
env = cp.Envr()
model = env.createModel("Knap")
v = model.addVars(["a", "b"], lb=0, ub=5, vtype=COPT.INTEGER, nameprefix="n")
model.addConstr(2 * v["a"] + 3 * v["b"] <= 12)
model.setObjective(cp.quicksum(c * v[k] for k, c in (("a", 3), ("b", 5))), COPT.MAXIMIZE)
)";

const char* kCoptInfeasible = R"(import coptpy as cp
from coptpy import COPT
env = cp.Envr()
model = env.createModel("Bad")
x = model.addVar(lb=0, name="x")
model.addConstr(x >= 5)
model.addConstr(x <= 2)
model.setObjective(x, COPT.MINIMIZE)
model.solve()
print(model.status)
)";

// PuLP, the default solver (prob.solve()): min 2x + 3y, x + y >= 5, x >= 1, y >= 1 -> 11.
const char* kPulpDefault = R"(import pulp
prob = pulp.LpProblem("Diet", pulp.LpMinimize)
x = pulp.LpVariable("x", lowBound=1)
y = pulp.LpVariable("y", lowBound=1)
prob += 2 * x + 3 * y
prob += x + y >= 5
prob.solve()
print(pulp.LpStatus[prob.status], pulp.value(prob.objective))
)";

// PuLP with PULP_CBC_CMD (what PyPI's PuLP bundles; Debian's lacks the binary) on an integer model:
// max 5a + 4b, 6a + 4b <= 24, a + 2b <= 6, a, b integer >= 0 -> 20 (a = 4, b = 0) vs (3, 1) 19, (2, 2) 18.
const char* kPulpCbc = R"(from pulp import *
model = LpProblem("Paint", LpMaximize)
a = LpVariable("a", lowBound=0, cat="Integer")
b = LpVariable("b", lowBound=0, cat=LpInteger)
model += 5 * a + 4 * b, "profit"
model += 6 * a + 4 * b <= 24
model += a + 2 * b <= 6
status = model.solve(PULP_CBC_CMD(msg=0, timeLimit=30))
print(LpStatus[status], value(model.objective))
)";

// PuLP without a solve() call: the harness solves it. max x, x <= 7.5 -> 7.5.
const char* kPulpUnsolved = R"(import pulp as pl
problem = pl.LpProblem("p", pl.LpMaximize)
x = pl.LpVariable("x", 0)
problem += x
problem += x <= 7.5
)";

const char* kPulpInfeasible = R"(import pulp
prob = pulp.LpProblem("inf", pulp.LpMinimize)
n = pulp.LpVariable("n", 0, 10, cat="Integer")
prob += n
prob += 2 * n == 7
prob.solve()
)";

// Issue #25's MILP, which CBC's preprocessing calls infeasible: PuLP on CBC says Infeasible, trex's re-solve of
// PuLP's own LP file (without CBC's preprocessing, and GLPK) finds -489.75, which is scored.
const char* kPulpCbcVictim = R"(import pulp
prob = pulp.LpProblem("victim", pulp.LpMinimize)
qty0 = pulp.LpVariable("qty0", 0, 56)
flow1 = pulp.LpVariable("flow1", 0, 36)
qty2 = pulp.LpVariable("qty2", 3, 51)
y3 = pulp.LpVariable("y3", 0, 6)
y4 = pulp.LpVariable("y4", 0, 24, cat="Integer")
qty5 = pulp.LpVariable("qty5", -17, 43)
z6 = pulp.LpVariable("z6", 0, 20)
x7 = pulp.LpVariable("x7", 0, 2, cat="Integer")
prob += -1.25 * qty0 + 0.5 * flow1 - 2 * qty2 + 1.25 * y3 + 2 * y4 - 1.25 * qty5 - 12 * z6 - 12 * x7
prob += 10 * qty0 - 2.25 * y3 >= 287.25
prob += 1.5 * qty0 - 3 * flow1 - 10 * qty2 - 4 * qty5 + 10 * z6 <= -248
prob.solve(pulp.PULP_CBC_CMD(msg=0))
print(pulp.LpStatus[prob.status])
)";

const char* kPyomo = R"(import pyomo.environ as pyo
model = pyo.ConcreteModel()
model.x = pyo.Var(within=pyo.NonNegativeReals)
model.obj = pyo.Objective(expr=model.x, sense=pyo.maximize)
)";

const char* kGurobipy = R"(import gurobipy as gp
from gurobipy import GRB
m = gp.Model()
x = m.addVar(ub=4)
m.setObjective(2 * x, GRB.MAXIMIZE)
m.optimize()
)";

struct Case {
  const char* id;
  const char* code;
  double answer;
};

const Case kCases[] = {{"copt_orlm", kCoptOrlm, 11},          {"copt_unsolved", kCoptUnsolved, 20},
                       {"copt_infeasible", kCoptInfeasible, 0}, {"pulp_default", kPulpDefault, 11},
                       {"pulp_cbc", kPulpCbc, 20},              {"pulp_unsolved", kPulpUnsolved, 7.5},
                       {"pulp_infeasible", kPulpInfeasible, 0}, {"pulp_cbc_victim", kPulpCbcVictim, -489.75},
                       {"pyomo", kPyomo, 1},                    {"no_code", "", 1},
                       {"gurobipy", kGurobipy, 8}};

std::map<std::string, trex::Json> eval(const fs::path& dir, const std::string& out, const std::string& extra) {
  const std::string cmd = std::string(TREX_BIN_PATH) + " eval --responses " + (dir / "responses.jsonl").string() +
                          " --benchmarks " + (dir / "apis.jsonl").string() + " --out " + (dir / out).string() +
                          " --concurrency 2 " + extra + " > " + (dir / (out + ".log")).string() + " 2>&1";
  std::map<std::string, trex::Json> by_id;
  if (std::system(cmd.c_str()) != 0) {
    ADD_FAILURE() << cmd << "\n" << trex::read_file(dir / (out + ".log"));
    return by_id;
  }
  trex::JsonlReader rd(dir / out / "apis" / "results.jsonl");
  while (auto j = rd.next()) by_id[(*j)["id"]] = *j;
  return by_id;
}

}  // namespace

TEST(ApiExecutorsEval, EachAnswerRunsOnItsApi) {
  const fs::path dir = trex::testing::fresh_temp_dir("trex_api_executors");
  std::string items, responses;
  for (const auto& c : kCases) {
    items += trex::Json{{"id", c.id}, {"problem", "p"}, {"answer", c.answer}}.dump() + "\n";
    const std::string response = *c.code ? fenced(c.code) : std::string("   ");
    responses += trex::Json{{"id", c.id}, {"response", response}}.dump() + "\n";
  }
  trex::write_file_atomic(dir / "apis.jsonl", items);
  trex::write_file_atomic(dir / "responses.jsonl", responses);
  for (const std::string mode : {"", "--no-forkserver"}) {
    SCOPED_TRACE(mode.empty() ? "default (fork server when root)" : mode);
    auto r = eval(dir, mode.empty() ? "out_default" : "out_exec", mode);
    ASSERT_EQ(r.size(), std::size(kCases));
    for (const char* id : {"copt_orlm", "copt_unsolved", "pulp_default", "pulp_cbc", "pulp_unsolved", "pulp_cbc_victim",
                           "gurobipy"})
      EXPECT_EQ(r[id]["kind"], "success") << id << ": " << r[id].dump();
    EXPECT_EQ(r["copt_orlm"]["predicted"], 11.0);
    EXPECT_EQ(r["pulp_cbc"]["predicted"], 20.0);
    for (const char* id : {"copt_orlm", "copt_unsolved", "copt_infeasible"}) EXPECT_EQ(r[id]["api"], "coptpy") << id;
    for (const char* id : {"pulp_default", "pulp_cbc", "pulp_unsolved", "pulp_infeasible", "pulp_cbc_victim"})
      EXPECT_EQ(r[id]["api"], "pulp") << id;
    EXPECT_EQ(r["gurobipy"]["api"], "gurobipy");
    EXPECT_EQ(r["copt_infeasible"]["kind"], "not_optimal");
    EXPECT_EQ(r["copt_infeasible"]["status"], "INFEASIBLE");
    EXPECT_EQ(r["pulp_infeasible"]["kind"], "not_optimal");
    EXPECT_EQ(r["pulp_infeasible"]["status"], "INFEASIBLE");
    // CBC's infeasible verdicts of PuLP answers are re-solved by trex: kept when true, overruled when not.
    EXPECT_GE(r["pulp_infeasible"].value("verdict_checks", 0), 1);
    EXPECT_EQ(r["pulp_infeasible"].value("verdict_overruled", true), false);
    EXPECT_EQ(r["pulp_cbc_victim"]["predicted"], -489.75);
    EXPECT_GE(r["pulp_cbc_victim"].value("verdict_checks", 0), 2);
    EXPECT_EQ(r["pulp_cbc_victim"].value("verdict_overruled", false), true);
    EXPECT_FALSE(r["pulp_cbc"].contains("verdict_checks"));
    // An API trex does not run: named in the taxonomy, not run at all.
    EXPECT_EQ(r["pyomo"]["kind"], "unsupported_api");
    EXPECT_EQ(r["pyomo"]["api"], "pyomo");
    EXPECT_NE(r["pyomo"]["detail"].get<std::string>().find("pyomo"), std::string::npos);
    // No code, no API.
    EXPECT_EQ(r["no_code"]["kind"], "no_code");
    EXPECT_FALSE(r["no_code"].contains("api"));
  }
  fs::remove_all(dir);
}

// ORGEval (structure) targets: a coptpy answer writes its LP through model.write like a gurobipy one. B4O-ORGEval
// reference programs and their coptpy rewritings (tests/python/coptpy_oracle.py translate) get the same outcome
// per item, under the same ORGEval rewriting (write redirection, the lb quirk).
TEST(ApiExecutorsEval, CoptpyAnswersOnStructureTargetsScoreLikeTheirGurobipyTwins) {
  const fs::path data = trex::testing::benchmarks_dir();
  const fs::path dir = trex::testing::fresh_temp_dir("trex_api_orgeval");
  const std::vector<std::string> ids = {"BENCH4OPT_0", "BENCH4OPT_100", "BENCH4OPT_200", "BENCH4OPT_300"};
  std::string gurobipy_lines, coptpy_lines;
  trex::JsonlReader rd(data / "bench4opt_orgeval.jsonl");
  while (auto j = rd.next()) {
    const std::string id = (*j)["id"];
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) continue;
    const std::string code = (*j)["reference_code"];
    trex::write_file_atomic(dir / (id + ".py"), code);
    const std::string translated = (dir / (id + ".copt.py")).string();
    const std::string cmd = "/usr/bin/python3 " + (fs::path(TREX_SOURCE_DIR) / "tests/python/coptpy_oracle.py").string() +
                            " translate " + (dir / (id + ".py")).string() + " > " + translated;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    gurobipy_lines += trex::Json{{"id", id}, {"benchmark", "b4o_orgeval"}, {"response", fenced(code)}}.dump() + "\n";
    coptpy_lines +=
        trex::Json{{"id", id}, {"benchmark", "b4o_orgeval"}, {"response", fenced(trex::read_file(translated))}}.dump() +
        "\n";
  }
  trex::write_file_atomic(dir / "gurobipy.jsonl", gurobipy_lines);
  trex::write_file_atomic(dir / "coptpy.jsonl", coptpy_lines);
  std::map<std::string, std::map<std::string, trex::Json>> by_api;
  for (const std::string api : {"gurobipy", "coptpy"}) {
    const fs::path out = dir / ("out_" + api);
    std::string id_list;
    for (const auto& id : ids) id_list += (id_list.empty() ? "" : ",") + id;
    const std::string cmd = "TREX_BENCHMARKS=" + data.string() + " " + TREX_BIN_PATH + " eval --benchmarks b4o_orgeval --ids " +
                            id_list + " --responses " + (dir / (api + ".jsonl")).string() + " --out " + out.string() +
                            " > " + (dir / (api + ".log")).string() + " 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << trex::read_file(dir / (api + ".log"));
    trex::JsonlReader r(out / "b4o_orgeval" / "results.jsonl");
    while (auto j = r.next()) by_api[api][(*j)["id"]] = *j;
  }
  ASSERT_EQ(by_api["gurobipy"].size(), ids.size());
  ASSERT_EQ(by_api["coptpy"].size(), ids.size());
  int successes = 0;
  for (const auto& id : ids) {
    EXPECT_EQ(by_api["coptpy"][id]["kind"], by_api["gurobipy"][id]["kind"]) << id;
    EXPECT_EQ(by_api["coptpy"][id]["api"], "coptpy") << id;
    EXPECT_EQ(by_api["gurobipy"][id]["api"], "gurobipy") << id;
    successes += by_api["coptpy"][id]["kind"] == "success";
  }
  EXPECT_GE(successes, 1);  // the LP written by the coptpy layer is the reference's structure
  fs::remove_all(dir);
}
