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
