// Answers: every task category builds a checked answer; the pipeline check catches a wrong LP;
// repair flaws are observable (the flawed model does not reproduce the verified optimum).
#include <gtest/gtest.h>

#include "lp/lp_format.hpp"
#include "lp/solver.hpp"
#include "ordata/answers.hpp"
#include "ordata/families.hpp"

using namespace trex::ordata;

static Instance verified_instance(Structure st, Verification& v) {
  for (uint64_t seed = 1;; ++seed) {
    Instance in = generate(st, Difficulty::Small, 0, seed);
    v = verify_instance(in);
    if (v.accepted) return in;
  }
}

TEST(Answers, EveryTaskIsCheckedAndWrongLpsAreCaught) {
  Verification v;
  Instance in = verified_instance(Structure::Transportation, v);
  trex::Rng rng(3);
  for (int m = 0; m < kNumModes; ++m) {
    RenderedProblem p = render_problem(in, Mode(m), rng);
    for (int t = 0; t < kNumTasks; ++t) {
      std::optional<Flaw> flaw;
      if (Task(t) == Task::Repair) {
        flaw = make_flaw(in, v, rng);
        ASSERT_TRUE(flaw.has_value());
      }
      TaskSample s = build_task(in, v, p, Task(t), flaw, rng);
      EXPECT_EQ(check_answer(s, v.objective), "") << to_string(Task(t));
      EXPECT_FALSE(s.user.empty());
      EXPECT_NE(s.user.find(in.intro), std::string::npos);
      if (Task(t) == Task::CodeOnly) {
        EXPECT_TRUE(s.answer_lp.empty());
        EXPECT_NE(s.assistant.find("json.load"), std::string::npos);
      } else {
        EXPECT_EQ(extract_lp_block(s.assistant), s.answer_lp);
        // A different objective value must be caught.
        EXPECT_EQ(check_answer(s, v.objective + 1.0), "answer_lp_objective_mismatch");
        // A tampered LP block must be caught.
        TaskSample bad = s;
        size_t pos = bad.assistant.find(">= ", bad.assistant.find("```lp"));
        ASSERT_NE(pos, std::string::npos);
        bad.assistant.replace(pos, 3, "<= ");
        EXPECT_NE(check_answer(bad, v.objective), "");
      }
    }
  }
}

TEST(Answers, RepairFlawsAreObservableForEveryStructure) {
  for (int st = 0; st < kNumStructures; ++st) {
    Verification v;
    Instance in = verified_instance(Structure(st), v);
    trex::Rng rng(uint64_t(st) + 1);
    auto flaw = make_flaw(in, v, rng);
    if (!flaw) continue;  // possible but rare; the pipeline then rejects the candidate
    auto r = trex::lp::solve(flaw->model, trex::lp::Backend::Cbc);
    bool differs = r.status != trex::lp::SolveStatus::Optimal || !objectives_match(round_objective(r.objective), v.objective);
    EXPECT_TRUE(differs) << to_string(Structure(st)) << " " << flaw->kind;
    EXPECT_FALSE(flaw->diagnosis.empty());
  }
}

TEST(Answers, LpBlockExtraction) {
  EXPECT_EQ(extract_lp_block("x ```lp\nA\n``` y ```lp\nBBB\n```"), "BBB\n");
  EXPECT_EQ(extract_lp_block("no block"), "");
  EXPECT_EQ(extract_lp_block("```lp\nunterminated"), "");
}
