// Phrasing helpers: template expansion with alternatives ("{ships|sends|delivers}"), natural number
// formatting for prose ("1,250", "0.35", "$1,250") and list joining ("A, B and C").
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "util/rng.hpp"

namespace trex::ordata {

// Replaces every "{a|b|c}" group by one alternative drawn from rng (groups do not nest). Text
// without braces is returned unchanged and draws nothing.
std::string expand(Rng& rng, std::string_view tmpl);

// Which phrasing a template expansion drew (the synth manifest's diversity counts): `groups` identifies the
// sentence template by its alternative groups only (the text between groups holds the instance's names and
// numbers; digits inside the groups are masked too), `choice` also by the alternative drawn in each group. Both 0 for a template without groups.
struct PhraseUse {
  uint64_t groups = 0, choice = 0;
};
// expand() that also reports the phrasing drawn (the same draws, the same text).
std::string expand(Rng& rng, std::string_view tmpl, PhraseUse& use);

// Prose numbers: thousands separators, at most `decimals` decimals, trailing zeros dropped.
std::string fmt_num(double v, int decimals = 2);
// Money in prose: "$1,250" for USD, "1,250 EUR" otherwise.
std::string fmt_money(double v, const std::string& currency);
// "A", "A and B", "A, B and C" (conjunction configurable).
std::string join_list(const std::vector<std::string>& items, const std::string& conj = "and");
std::string capitalize(std::string s);
// Readable label: underscores become spaces ("Pig_iron" -> "Pig iron").
std::string readable(const std::string& label);

}  // namespace trex::ordata
