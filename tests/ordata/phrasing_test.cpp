// Phrasing helpers: prose numbers, template alternatives, lists.
#include <gtest/gtest.h>

#include <set>

#include "ordata/phrasing.hpp"

using namespace trex::ordata;

TEST(Phrasing, Numbers) {
  EXPECT_EQ(fmt_num(0), "0");
  EXPECT_EQ(fmt_num(1250), "1,250");
  EXPECT_EQ(fmt_num(1234567.5), "1,234,567.5");
  EXPECT_EQ(fmt_num(0.35), "0.35");
  EXPECT_EQ(fmt_num(2.999), "3");
  EXPECT_EQ(fmt_num(-42.1), "-42.1");
  EXPECT_EQ(fmt_num(-0.001), "0");
  EXPECT_EQ(fmt_num(0.057, 3), "0.057");
  EXPECT_EQ(fmt_money(1250, "USD"), "$1,250");
  EXPECT_EQ(fmt_money(99.5, "EUR"), "99.5 EUR");
}

TEST(Phrasing, TemplatesAndLists) {
  trex::Rng rng(5);
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) seen.insert(expand(rng, "We {ship|send} goods {daily|weekly}."));
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_EQ(expand(rng, "no braces"), "no braces");
  EXPECT_EQ(expand(rng, "{only}"), "only");
  trex::Rng a(9), b(9);
  EXPECT_EQ(expand(a, "{a|b|c}{d|e}"), expand(b, "{a|b|c}{d|e}"));
  EXPECT_EQ(join_list({"A"}), "A");
  EXPECT_EQ(join_list({"A", "B"}), "A and B");
  EXPECT_EQ(join_list({"A", "B", "C"}), "A, B and C");
  EXPECT_EQ(readable("Pig_iron"), "Pig iron");
  EXPECT_EQ(capitalize("abc"), "Abc");
}
