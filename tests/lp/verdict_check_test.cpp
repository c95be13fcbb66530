// Confirmation of CBC's MILP verdicts (lp/solver.hpp, SolveOptions::confirm_verdicts): issue #25's MILP, which
// CBC 2.10.8's preprocessing calls infeasible, solves to -489.75 (two re-solves overrule it); an L1 fit whose
// optimum the preprocessing cuts off (20.5) solves to 19.4333 (the re-solve's better point, which satisfies the
// model, wins); true verdicts are confirmed by the first re-solve; the checks reach `trex solve --json`.
#include <gtest/gtest.h>

#include <string>

#include "lp/lp_format.hpp"
#include "lp/solver.hpp"

namespace trex::lp {
namespace {

const char* kPreprocessingVictim = R"(Minimize
 obj: - 1.25 qty0 + 0.5 flow1 - 2 qty2 + 1.25 y3 + 2 y4 - 1.25 qty5 - 12 z6 - 12 x7
Subject To
 c0: 10 qty0 - 2.25 y3 >= 287.25
 c1: 1.5 qty0 - 3 flow1 - 10 qty2 - 4 qty5 + 10 z6 <= -248
Bounds
 qty0 <= 56
 0 <= flow1 <= 36
 3 <= qty2 <= 51
 0 <= y3 <= 6
 y4 <= 24
 -17 <= qty5 <= 43
 z6 <= 20
 0 <= x7 <= 2
General
 y4 x7
End
)";

TEST(VerdictCheck, PreprocessingsWrongInfeasibleIsOverruled) {
  const Model m = read_lp_string(kPreprocessingVictim, "victim.lp");
  SolveOptions alone;
  alone.confirm_verdicts = false;
  // The bug this guards against (Debian's CBC 2.10.8); if a newer CBC fixes it, this line says so.
  EXPECT_EQ(solve(m, Backend::Cbc, alone).status, SolveStatus::Infeasible)
      << "CBC's preprocessing no longer misjudges this model: the confirmation is still right, update this test";
  const SolveResult r = solve(m, Backend::Cbc);
  ASSERT_EQ(r.status, SolveStatus::Optimal) << r.message;
  EXPECT_NEAR(r.objective, -489.75, 1e-9);
  EXPECT_TRUE(r.overruled);
  ASSERT_EQ(r.checks.size(), 2u);
  EXPECT_EQ(r.checks[0].solver, "cbc_without_preprocessing");
  EXPECT_EQ(r.checks[0].status, SolveStatus::Optimal);
  EXPECT_EQ(r.checks[1].solver, "glpk");
  EXPECT_EQ(r.checks[1].status, SolveStatus::Optimal);
  EXPECT_NE(r.message.find("said infeasible"), std::string::npos) << r.message;
  EXPECT_EQ(solve(m, Backend::Glpk).status, SolveStatus::Optimal);
}

// An L1 fit y_i ~ a x_i + b with |r_i| written the textbook big-M way (r = p - n is what the gurobipy layer writes
// now; this form came from a model answer): CBC's preprocessing returns 20.5 as optimal; the optimum is 19.4333
// (GLPK, CBC without preprocessing, Gurobi 13.0.3 and the LP relaxation agree).
const char* kOptimumCutOff = R"(Minimize
 obj: C8 + C9 + C10 + C11 + C12 + C13
Subject To
 R0: C1 + C2 = 1
 R1: C0 + C1 + C3 = 2.9
 R2: 2 C0 + C1 + C4 = 5.2
 R3: 3 C0 + C1 + C5 = 7.1
 R4: 4 C0 + C1 + C6 = 8.8
 R5: 5 C0 + C1 + C7 = 30
 A0a: - C2 + C8 >= 0
 A0b: C2 + C8 >= 0
 A0c: - C2 + C8 + 120 C14 <= 120
 A0d: C2 + C8 - 120 C14 <= 0
 A1a: - C3 + C9 >= 0
 A1b: C3 + C9 >= 0
 A1c: - C3 + C9 + 120 C15 <= 120
 A1d: C3 + C9 - 120 C15 <= 0
 A2a: - C4 + C10 >= 0
 A2b: C4 + C10 >= 0
 A2c: - C4 + C10 + 120 C16 <= 120
 A2d: C4 + C10 - 120 C16 <= 0
 A3a: - C5 + C11 >= 0
 A3b: C5 + C11 >= 0
 A3c: - C5 + C11 + 120 C17 <= 120
 A3d: C5 + C11 - 120 C17 <= 0
 A4a: - C6 + C12 >= 0
 A4b: C6 + C12 >= 0
 A4c: - C6 + C12 + 120 C18 <= 120
 A4d: C6 + C12 - 120 C18 <= 0
 A5a: - C7 + C13 >= 0
 A5b: C7 + C13 >= 0
 A5c: - C7 + C13 + 120 C19 <= 120
 A5d: C7 + C13 - 120 C19 <= 0
Bounds
 -50 <= C0 <= 50
 -50 <= C1 <= 50
 -60 <= C2 <= 60
 -60 <= C3 <= 60
 -60 <= C4 <= 60
 -60 <= C5 <= 60
 -60 <= C6 <= 60
 -60 <= C7 <= 60
 C8 <= 500
 C9 <= 500
 C10 <= 500
 C11 <= 500
 C12 <= 500
 C13 <= 500
Binaries
 C14 C15 C16 C17 C18 C19
End

)";

TEST(VerdictCheck, PreprocessingsWrongOptimumIsOverruled) {
  const Model m = read_lp_string(kOptimumCutOff, "l1fit.lp");
  SolveOptions alone;
  alone.confirm_verdicts = false;
  EXPECT_NEAR(solve(m, Backend::Cbc, alone).objective, 20.5, 1e-6)
      << "CBC's preprocessing no longer cuts this optimum off: the confirmation is still right, update this test";
  const SolveResult r = solve(m, Backend::Cbc);
  ASSERT_EQ(r.status, SolveStatus::Optimal) << r.message;
  EXPECT_NEAR(r.objective, 19.4333333333, 1e-6);
  EXPECT_TRUE(r.overruled);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_EQ(r.checks[0].solver, "cbc_without_preprocessing");
  EXPECT_EQ(r.checks[0].status, SolveStatus::Optimal);
  EXPECT_NE(r.message.find("said optimal 20.5"), std::string::npos) << r.message;
  EXPECT_NEAR(solve(m, Backend::Glpk).objective, 19.4333333333, 1e-6);
}

TEST(VerdictCheck, TrueVerdictsAreConfirmedOnce) {
  const Model infeasible = read_lp_string("Minimize\n obj: x\nSubject To\n odd: 2 x = 1\nBounds\n x <= 10\nGeneral\n x\nEnd\n", "odd.lp");
  SolveResult r = solve(infeasible, Backend::Cbc);
  EXPECT_EQ(r.status, SolveStatus::Infeasible);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_EQ(r.checks[0].status, SolveStatus::Infeasible);
  EXPECT_FALSE(r.overruled);
  const Model unbounded = read_lp_string("Maximize\n obj: x + y\nSubject To\n c: x - y <= 3\nGeneral\n x\nEnd\n", "u.lp");
  r = solve(unbounded, Backend::Cbc);
  EXPECT_EQ(r.status, SolveStatus::Unbounded);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_EQ(r.checks[0].status, SolveStatus::Unbounded);
  // an optimal MILP is confirmed by one re-solve that agrees; LPs and GLPK's own verdicts are not re-solved
  r = solve(read_lp_string("Minimize\n obj: x\nSubject To\n c: x >= 1.5\nGeneral\n x\nEnd\n", "o.lp"), Backend::Cbc);
  EXPECT_EQ(r.status, SolveStatus::Optimal);
  EXPECT_DOUBLE_EQ(r.objective, 2.0);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_EQ(r.checks[0].status, SolveStatus::Optimal);
  EXPECT_FALSE(r.overruled);
  EXPECT_TRUE(solve(read_lp_string("Minimize\n obj: x\nSubject To\n c: x <= -1\nEnd\n", "lp.lp"), Backend::Cbc)
                  .checks.empty());
  EXPECT_TRUE(solve(infeasible, Backend::Glpk).checks.empty());
}

}  // namespace
}  // namespace trex::lp
