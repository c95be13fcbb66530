// Near-duplicate filter: token sets, exact Jaccard, and the MinHash/LSH index against the
// brute-force reference on planted near-duplicates.
#include <gtest/gtest.h>

#include <string>

#include "ordata/dedup.hpp"
#include "util/rng.hpp"

using namespace trex::ordata;

TEST(Dedup, TokensAndJaccard) {
  auto a = token_set("The plant in Lyon ships 120 tons; the PLANT in Porto ships 95.");
  auto b = token_set("the plant in lyon ships 120 tons");
  // Tokens of length >= 3, lowercased, unique: the plant lyon ships 120 tons porto -> 7.
  EXPECT_EQ(a.size(), 7u);
  EXPECT_EQ(b.size(), 6u);
  EXPECT_DOUBLE_EQ(jaccard(a, b), 6.0 / 7.0);
  EXPECT_DOUBLE_EQ(jaccard(a, a), 1.0);
  EXPECT_DOUBLE_EQ(jaccard(token_set("alpha beta"), token_set("gamma delta")), 0.0);
}

static std::string random_doc(trex::Rng& rng, int words) {
  std::string s;
  for (int i = 0; i < words; ++i) s += "w" + std::to_string(rng.uniform_int(0, 5000)) + " ";
  return s;
}

TEST(Dedup, LshMatchesBruteForce) {
  trex::Rng rng(11);
  std::vector<std::string> docs;
  for (int i = 0; i < 300; ++i) {
    if (i > 0 && i % 10 == 0) {  // planted near-duplicate: copy of an earlier doc with a few words changed
      std::string base = docs[size_t(rng.uniform_int(0, i - 1))];
      int edits = int(rng.uniform_int(0, 12));
      for (int e = 0; e < edits; ++e) base += " x" + std::to_string(rng.uniform_int(0, 1000000));
      docs.push_back(base);
    } else {
      docs.push_back(random_doc(rng, 150));
    }
  }
  std::vector<TokenSet> accepted_ref;
  NearDuplicateIndex fast(0.9);
  int disagreements = 0, dups = 0;
  for (const auto& d : docs) {
    auto t = token_set(d);
    double ref = 0;
    for (const auto& a : accepted_ref) ref = std::max(ref, jaccard(t, a));
    auto sig = minhash(t);
    bool ref_dup = ref > 0.9, fast_dup = fast.is_near_duplicate(t, sig);
    disagreements += ref_dup != fast_dup;
    dups += ref_dup;
    if (!ref_dup) accepted_ref.push_back(t);
    if (!fast_dup) fast.add(t, sig);
  }
  EXPECT_GT(dups, 5);
  EXPECT_EQ(disagreements, 0);
  auto pm = max_jaccard_bruteforce(accepted_ref);
  EXPECT_LE(pm.value, 0.9);
}
