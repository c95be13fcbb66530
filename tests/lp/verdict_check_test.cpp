// Confirmation of CBC's infeasible / unbounded MILP verdicts (lp/solver.hpp, SolveOptions::confirm_verdicts):
// issue #25's MILP, which CBC 2.10.8's preprocessing calls infeasible, solves to -489.75 (two re-solves overrule
// it); true verdicts are confirmed by the first re-solve; the checks reach `trex solve --json`.
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
  // optimal MILPs, LPs and GLPK's own verdicts are not re-solved
  EXPECT_TRUE(solve(read_lp_string("Minimize\n obj: x\nSubject To\n c: x >= 1.5\nGeneral\n x\nEnd\n", "o.lp"),
                    Backend::Cbc).checks.empty());
  EXPECT_TRUE(solve(read_lp_string("Minimize\n obj: x\nSubject To\n c: x <= -1\nEnd\n", "lp.lp"), Backend::Cbc)
                  .checks.empty());
  EXPECT_TRUE(solve(infeasible, Backend::Glpk).checks.empty());
}

}  // namespace
}  // namespace trex::lp
