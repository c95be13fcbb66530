// Quadratic models through solve() (lp/solver.hpp): Ipopt for continuous ones, Bonmin for mixed-integer ones,
// "optimal" (proven) when convex or when spatial branch and bound closes the gap of a nonconvex one,
// "local_optimal" otherwise; the backend asked for does not matter; nothing on stdout; the same input gives
// the same bits; `trex solve` prints solver, optimality and proof (text and --json).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "lp/lp_format.hpp"
#include "lp/solver.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace trex::lp {
namespace {

// f = x^2 + y^2 - 2x - 4y = (x-1)^2 + (y-2)^2 - 5 on x + y <= 1: the projection (0, 1), f = -3.
const char* kConvexQp = "Minimize\n obj: - 2 x - 4 y + [ 2 x ^2 + 2 y ^2 ] / 2\nSubject To\n c: x + y <= 1\n"
                        "Bounds\n x free\n y free\nEnd\n";
// max x + y on the disk x^2 + y^2 <= 2: (1, 1), 2.
const char* kConvexQcqp = "Maximize\n obj: x + y\nSubject To\n disk: [ x ^2 + y ^2 ] <= 2\nBounds\n x free\n y free\nEnd\n";
// (x - 2.6)^2 + (y - 1.3)^2 - 8.45 over integers with x + y <= 3.5: (2, 1), f = -8.
const char* kMiqp = "Minimize\n obj: - 5.2 x - 2.6 y + [ 2 x ^2 + 2 y ^2 ] / 2\nSubject To\n c: x + y <= 3.5\n"
                    "Bounds\n x <= 5\n y <= 5\nGeneral\n x y\nEnd\n";
// max x*y with x + y <= 4: the bilinear objective is not concave.
const char* kNonconvex = "Maximize\n obj: [ 2 x * y ] / 2\nSubject To\n c: x + y <= 4\nBounds\n x <= 3\n y <= 3\nEnd\n";

SolveResult solve_text(const char* text, Backend backend = Backend::Cbc) {
  return solve(read_lp_string(text, "q.lp"), backend);
}

SolveResult solve_local(const char* text) {  // Ipopt / Bonmin alone, no global search
  SolveOptions o;
  o.global_node_limit = 0;
  return solve(read_lp_string(text, "q.lp"), Backend::Cbc, o);
}

TEST(QuadraticSolve, ConvexQpIsProvenByIpopt) {
  for (Backend b : {Backend::Cbc, Backend::Glpk}) {
    const SolveResult r = solve_text(kConvexQp, b);
    ASSERT_EQ(r.status, SolveStatus::Optimal) << r.message;
    EXPECT_EQ(r.solver, "ipopt");
    EXPECT_TRUE(r.quadratic);
    EXPECT_TRUE(r.convex);
    EXPECT_NEAR(r.objective, -3.0, 1e-8);
    ASSERT_EQ(r.x.size(), 2u);
    EXPECT_NEAR(r.x[0], 0.0, 1e-7);
    EXPECT_NEAR(r.x[1], 1.0, 1e-7);
  }
}

TEST(QuadraticSolve, ConvexQcqpIsProvenByIpopt) {
  const SolveResult r = solve_text(kConvexQcqp);
  ASSERT_EQ(r.status, SolveStatus::Optimal) << r.message;
  EXPECT_EQ(r.solver, "ipopt");
  EXPECT_NEAR(r.objective, 2.0, 1e-8);
  EXPECT_NEAR(r.x[0], 1.0, 1e-7);
  EXPECT_NEAR(r.x[1], 1.0, 1e-7);
  // maximising a concave objective is convex too: x - x^2/2 peaks at x = 1 with 1/2
  const SolveResult c = solve_text("Maximize\n obj: x + [ - x ^2 ] / 2\nSubject To\n c: x <= 4\nEnd\n");
  ASSERT_EQ(c.status, SolveStatus::Optimal) << c.message;
  EXPECT_NEAR(c.objective, 0.5, 1e-9);
}

TEST(QuadraticSolve, MiqpIsProvenByBonmin) {
  const SolveResult r = solve_text(kMiqp);
  ASSERT_EQ(r.status, SolveStatus::Optimal) << r.message;
  EXPECT_EQ(r.solver, "bonmin");
  EXPECT_TRUE(r.convex);
  EXPECT_NEAR(r.objective, -8.0, 1e-7);
  EXPECT_NEAR(r.x[0], 2.0, 1e-6);
  EXPECT_NEAR(r.x[1], 1.0, 1e-6);
}

TEST(QuadraticSolve, ConvexMiqcpIsProvenByBonmin) {
  // integers in the disk x^2 + y^2 <= 2.5, max x + y: (1, 1); the continuous optimum (1.118, 1.118) is not integral
  const SolveResult r = solve_text("Maximize\n obj: x + y\nSubject To\n disk: [ x ^2 + y ^2 ] <= 2.5\n"
                                   "Bounds\n -3 <= x <= 3\n -3 <= y <= 3\nGeneral\n x y\nEnd\n");
  ASSERT_EQ(r.status, SolveStatus::Optimal) << r.message;
  EXPECT_EQ(r.solver, "bonmin");
  EXPECT_EQ(r.proof, "convex");
  EXPECT_NEAR(r.objective, 2.0, 1e-7);
}

TEST(QuadraticSolve, NonconvexWithoutGlobalSearchIsOnlyLocal) {
  const SolveResult r = solve_local(kNonconvex);
  ASSERT_EQ(r.status, SolveStatus::LocalOptimal) << r.message;
  EXPECT_EQ(r.solver, "ipopt");
  EXPECT_FALSE(r.convex);
  EXPECT_EQ(r.proof, "");
  EXPECT_NE(r.convexity.find("objective is not concave"), std::string::npos) << r.convexity;
  ASSERT_EQ(r.x.size(), 2u);
  EXPECT_NEAR(r.objective, r.x[0] * r.x[1], 1e-9);  // the point's own value
  EXPECT_GT(r.objective, 0.0);
  // with an integer variable it is Bonmin's, still local
  const std::string mixed = std::string(kNonconvex, std::string(kNonconvex).size() - 4) + "General\n x\nEnd\n";
  const SolveResult m = solve_local(mixed.c_str());
  ASSERT_EQ(m.status, SolveStatus::LocalOptimal) << m.message;
  EXPECT_EQ(m.solver, "bonmin");
  EXPECT_NEAR(m.x[0], std::round(m.x[0]), 1e-6);
}

TEST(QuadraticSolve, SpatialBranchAndBoundProvesNonconvexOptima) {
  const SolveResult r = solve_text(kNonconvex);  // max xy on x + y <= 4, x, y <= 3: (2, 2)
  ASSERT_EQ(r.status, SolveStatus::Optimal) << r.message;
  EXPECT_EQ(r.proof, "spatial_branch_and_bound");
  EXPECT_FALSE(r.convex);
  EXPECT_NEAR(r.objective, 4.0, 1e-6);
  EXPECT_NE(r.message.find("proven by spatial branch and bound"), std::string::npos) << r.message;
  // a concave objective minimised over [-1, 4]: two local minima, -3 at -1 and the global -8 at 4
  const char* two_minima = "Minimize\n obj: 2 x + [ - 2 x ^2 ] / 2\nSubject To\n c: x <= 10\nBounds\n -1 <= x <= 4\nEnd\n";
  const SolveResult local = solve_local(two_minima);
  ASSERT_EQ(local.status, SolveStatus::LocalOptimal) << local.message;
  const SolveResult global = solve_text(two_minima);
  ASSERT_EQ(global.status, SolveStatus::Optimal) << global.message;
  EXPECT_NEAR(global.objective, -8.0, 1e-7);
  EXPECT_NEAR(global.x[0], 4.0, 1e-7);
  EXPECT_LE(global.objective, local.objective + 1e-9);
  // mixed integer: Bonmin's local optimum, then the same search with CBC relaxations
  const std::string mixed = std::string(kNonconvex, std::string(kNonconvex).size() - 4) + "General\n x\nEnd\n";
  const SolveResult m = solve_text(mixed.c_str());
  ASSERT_EQ(m.status, SolveStatus::Optimal) << m.message;
  EXPECT_EQ(m.solver, "bonmin");
  EXPECT_NEAR(m.objective, 4.0, 1e-6);
  // complementarity, and a box the linear rows give (x has no declared upper bound): the optimum sits on the
  // derived bound, which must not be cut off (x = 7/3, y = 0 beats y = 2)
  const SolveResult comp = solve_text("Maximize\n obj: x + y\nSubject To\n c: 3 x <= 7\n comp: [ x * y ] = 0\n"
                                      "Bounds\n y <= 2\nEnd\n");
  ASSERT_EQ(comp.status, SolveStatus::Optimal) << comp.message;
  EXPECT_NEAR(comp.objective, 7.0 / 3.0, 1e-12);
  EXPECT_EQ(comp.x[1], 0.0);
  // a quadratic equality: x y = 1 has its optimum x + y = 2 at (1, 1); proven only with finite boxes
  const SolveResult eq = solve_text("Minimize\n obj: x + y\nSubject To\n h: [ x * y ] = 1\nBounds\n x <= 10\n y <= 10\nEnd\n");
  ASSERT_EQ(eq.status, SolveStatus::Optimal) << eq.message;
  EXPECT_NEAR(eq.objective, 2.0, 1e-6);
  EXPECT_NEAR(eq.x[0] * eq.x[1], 1.0, 1e-6);
  // without declared bounds: the rows and the incumbent's cutoff (x + y <= 2) give the box by interval arithmetic
  const SolveResult implied = solve_text("Minimize\n obj: x + y\nSubject To\n h: [ x * y ] = 1\nEnd\n");
  ASSERT_EQ(implied.status, SolveStatus::Optimal) << implied.message;
  EXPECT_NEAR(implied.objective, 2.0, 1e-6);
  // gurobipy_oracle_api's quadratic_sections: x1 <= sqrt(5) from the row, x0 and x2 from the cutoff
  const SolveResult sections = solve_text("Minimize\n obj: x2 + 4 Constant + [ 2 x0 ^2 + 6 x0 * x1 ] / 2\nSubject To\n"
                                          " lin: x0 + x1 >= 1\n qc: [ x0 * x2 + x1 ^2 ] <= 5\nBounds\n Constant = 1\nEnd\n");
  ASSERT_EQ(sections.status, SolveStatus::Optimal) << sections.message;
  EXPECT_NEAR(sections.objective, 4.0, 1e-6);
  // free variables nothing bounds: no box, the optimum stays local
  const SolveResult open = solve_text("Minimize\n obj: [ 2 x * y ] / 2\nSubject To\n c: x - y = 0\nBounds\n x free\n y free\nEnd\n");
  ASSERT_EQ(open.status, SolveStatus::LocalOptimal) << open.message;
  EXPECT_NEAR(open.objective, 0.0, 1e-6);  // the local optimum is the global one here, but nothing proves it
  EXPECT_NE(open.message.find("no finite"), std::string::npos) << open.message;
  EXPECT_EQ(open.proof, "");
}

TEST(QuadraticSolve, InfeasibleConvexModel) {
  const SolveResult r = solve_text("Minimize\n obj: x\nSubject To\n disk: [ x ^2 + y ^2 ] <= 1\n far: x + y >= 3\n"
                                   "Bounds\n x free\n y free\nEnd\n");
  EXPECT_EQ(r.status, SolveStatus::Infeasible) << r.message;
  EXPECT_EQ(r.solver, "ipopt");
  EXPECT_TRUE(r.x.empty());
}

TEST(QuadraticSolve, TimeLimitStopsIpopt) {
  SolveOptions o;
  o.time_limit = 1e-9;  // past at Ipopt's first iteration callback
  const SolveResult r = solve(read_lp_string(kConvexQp, "q.lp"), Backend::Cbc, o);
  EXPECT_EQ(r.status, SolveStatus::TimeLimit) << r.message;
  EXPECT_TRUE(r.x.empty());
}

TEST(QuadraticSolve, SilentAndDeterministic) {
  for (const char* text : {kConvexQp, kMiqp, kNonconvex}) {
    ::testing::internal::CaptureStdout();
    const SolveResult a = solve_text(text);
    const SolveResult b = solve_text(text);
    const std::string printed = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(printed, "") << "the solver wrote to stdout";
    ASSERT_EQ(a.status, b.status);
    ASSERT_EQ(a.x.size(), b.x.size());
    for (size_t i = 0; i < a.x.size(); ++i) EXPECT_EQ(a.x[i], b.x[i]) << "x[" << i << "] differs between runs";
    EXPECT_EQ(a.objective, b.objective);
  }
}

TEST(QuadraticSolve, TrexSolvePrintsSolverAndOptimality) {
  const auto dir = trex::testing::fresh_temp_dir("trex_quadratic_solve");
  auto write = [&](const std::string& name, const char* text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const std::string qp = write("qp.lp", kConvexQp), miqp = write("miqp.lp", kMiqp), nc = write("nc.lp", kNonconvex);
  int rc = 0;
  const std::string bin = TREX_BIN_PATH;
  const auto j = nlohmann::json::parse(trex::testing::run_command(bin + " solve " + qp + " --json --values", rc));
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(j["solver"], "ipopt");
  EXPECT_EQ(j["status"], "optimal");
  EXPECT_EQ(j["optimality"], "proven");
  EXPECT_EQ(j["convex"], true);
  EXPECT_NEAR(j["objective"].get<double>(), -3.0, 1e-8);
  EXPECT_NEAR(j["values"]["y"].get<double>(), 1.0, 1e-7);
  const auto m = nlohmann::json::parse(trex::testing::run_command(bin + " solve " + miqp + " --json", rc));
  EXPECT_EQ(m["solver"], "bonmin");
  EXPECT_EQ(m["optimality"], "proven");
  const auto g = nlohmann::json::parse(trex::testing::run_command(bin + " solve " + nc + " --json", rc));
  EXPECT_EQ(g["status"], "optimal");
  EXPECT_EQ(g["optimality"], "proven");
  EXPECT_EQ(g["proof"], "spatial_branch_and_bound");
  EXPECT_EQ(j["proof"], "convex");
  const std::string local = " --global-nodes 0";
  const std::string nc_json = trex::testing::run_command(bin + " solve " + nc + local + " --json --values", rc);
  const auto n = nlohmann::json::parse(nc_json);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(n["status"], "local_optimal");
  EXPECT_EQ(n["optimality"], "local");
  EXPECT_EQ(n["convex"], false);
  EXPECT_TRUE(n["objective"].is_number());
  EXPECT_TRUE(n["values"].is_object());
  EXPECT_NE(n["convexity"].get<std::string>().find("not concave"), std::string::npos);
  // same input, same bytes (the timings aside)
  auto without_times = [](nlohmann::json x) {
    x.erase("seconds");
    x.erase("read_seconds");
    return x.dump();
  };
  EXPECT_FALSE(n.contains("proof"));
  EXPECT_EQ(without_times(nlohmann::json::parse(trex::testing::run_command(bin + " solve " + nc + " --json --values", rc))),
            without_times(nlohmann::json::parse(trex::testing::run_command(bin + " solve " + nc + " --json --values", rc))));
  const std::string text = trex::testing::run_command(bin + " solve " + nc + local, rc);
  EXPECT_EQ(rc, 0);
  EXPECT_NE(text.find("local_optimal, objective"), std::string::npos) << text;
  EXPECT_NE(text.find("local optimum, not proven"), std::string::npos) << text;
  EXPECT_NE(text.find("solver ipopt"), std::string::npos) << text;
  EXPECT_NE(text.find("nonconvex: the quadratic objective"), std::string::npos) << text;
  const std::string proven = trex::testing::run_command(bin + " solve " + qp, rc);
  EXPECT_NE(proven.find("(proven optimal)"), std::string::npos) << proven;
  EXPECT_NE(proven.find("  convex\n"), std::string::npos) << proven;
  EXPECT_NE(proven.find("  proof: convex\n"), std::string::npos) << proven;
  const std::string global_text = trex::testing::run_command(bin + " solve " + nc, rc);
  EXPECT_NE(global_text.find(": optimal, objective "), std::string::npos) << global_text;
  EXPECT_NE(global_text.find("(proven optimal)"), std::string::npos) << global_text;
  EXPECT_NE(global_text.find("  proof: spatial_branch_and_bound\n"), std::string::npos) << global_text;
}

}  // namespace
}  // namespace trex::lp
