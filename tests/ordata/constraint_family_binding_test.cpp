// A constraint family that never binds did not shape any optimum: for every later (non-classic) generator, each
// of its constraint families binds (an equality row, or an inequality at its bound) in at least one verified draw.
// Single draws with a family inactive are kept (a diet's upper limits may simply not bind) and counted in the
// manifest (families.*.slack_family_samples); slack_family_reason is what both use.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "ordata/families.hpp"
#include "ordata/verify.hpp"

using namespace trex::ordata;

TEST(ConstraintFamilyBinding, SlackFamilyReasonLooksAtEveryRowOfAFamily) {
  Instance in;
  in.constraints = {{"cap", "x + y <= 4", ""}, {"need", "x >= 1", ""}};
  int x = in.model.add_var("x", trex::lp::VarType::Continuous, 0, 10), y = in.model.add_var("y", trex::lp::VarType::Continuous, 0, 10);
  add_row(in.model, "cap_a", {{x, 1}, {y, 1}}, trex::lp::RowSense::LE, 4);
  add_row(in.model, "cap_b", {{x, 1}}, trex::lp::RowSense::LE, 9);
  add_row(in.model, "need", {{x, 1}}, trex::lp::RowSense::GE, 1);
  EXPECT_EQ(slack_family_reason(in, {1, 3}), "");                          // cap_a and need bind
  EXPECT_EQ(slack_family_reason(in, {2, 2}), "slack_constraint_family");   // need is slack
  EXPECT_EQ(slack_family_reason(in, {1, 1}), "slack_constraint_family");   // no cap row binds
  // Over integer variables only, a row is tight when no variable can move one unit into its slack.
  Instance units;
  units.constraints = {{"budget", "600 n1 + 700 n2 <= 2000", ""}};
  int n1 = units.model.add_var("n1", trex::lp::VarType::Integer, 0, 5), n2 = units.model.add_var("n2", trex::lp::VarType::Integer, 0, 5);
  add_row(units.model, "budget", {{n1, 600}, {n2, 700}}, trex::lp::RowSense::LE, 2000);
  EXPECT_EQ(slack_family_reason(units, {2, 1}), "");                         // 100 left: no unit fits, tight
  EXPECT_EQ(slack_family_reason(units, {1, 1}), "slack_constraint_family");  // 700 left: another n1 fits
  in.constraints.push_back({"ghost", "described, no rows", ""});            // a family without rows is not judged
  EXPECT_EQ(slack_family_reason(in, {1, 3}), "");
}

TEST(ConstraintFamilyBinding, EveryFamilyOfEveryLaterGeneratorBindsInSomeDraw) {
  for (int s = kNumClassicStructures; s < kNumStructures; ++s) {
    Structure st = Structure(s);
    // (variant, family) -> bound in some draw; variants -> verified draws.
    std::map<std::pair<std::string, std::string>, bool> bound;
    std::map<std::string, int> verified;
    for (uint64_t seed = 1; seed <= 48; ++seed) {
      Instance in = generate(st, Difficulty(seed % 4), int(seed % 10), 1000 + seed);
      Verification v = verify_instance(in);
      if (!v.accepted) continue;
      ++verified[in.variant];
      for (const auto& fam : in.constraints) {
        Instance one = in;
        one.constraints = {fam};
        bool& b = bound[{in.variant, fam.name}];
        b = b || slack_family_reason(one, v.x).empty();
      }
    }
    for (const auto& [key, b] : bound)
      EXPECT_TRUE(b) << to_string(st) << " / " << key.first << ": constraint family '" << key.second << "' binds in none of "
                     << verified[key.first] << " verified draws";
    EXPECT_FALSE(verified.empty()) << to_string(st);
  }
}
