// Template expansion and prose number formatting.
#include "ordata/phrasing.hpp"

#include <cmath>
#include <cstdio>
#include <functional>

namespace trex::ordata {

std::string expand(Rng& rng, std::string_view t, PhraseUse& use) {
  std::string out;
  out.reserve(t.size());
  std::string groups, choices;  // the groups' texts and the indices drawn, hashed below
  size_t i = 0;
  while (i < t.size()) {
    if (t[i] != '{') {
      out.push_back(t[i++]);
      continue;
    }
    size_t close = t.find('}', i);
    if (close == std::string_view::npos) {  // unbalanced: keep literally
      out.append(t.substr(i));
      break;
    }
    std::vector<std::string_view> alts;
    size_t start = i + 1;
    for (size_t k = start; k <= close; ++k)
      if (k == close || t[k] == '|') {
        alts.push_back(t.substr(start, k - start));
        start = k + 1;
      }
    size_t pick = size_t(rng.uniform_int(0, int64_t(alts.size()) - 1));
    out.append(alts[pick]);
    groups.append(t.substr(i, close + 1 - i));
    choices += std::to_string(pick) + ",";
    i = close + 1;
  }
  use = {};
  // Numbers inside a group ("{... (at most 5 units)|...}") come from the instance: masked, they make no new template.
  std::string masked;
  for (size_t k = 0; k < groups.size(); ++k) {
    bool digit = groups[k] >= '0' && groups[k] <= '9';
    if (!digit) masked.push_back(groups[k]);
    else if (k == 0 || !(groups[k - 1] >= '0' && groups[k - 1] <= '9')) masked.push_back('#');  // a run of digits: one '#'
  }
  groups = std::move(masked);
  if (!groups.empty()) {
    use.groups = std::hash<std::string>{}(groups);  // distinct counts only: any stable hash will do
    use.choice = std::hash<std::string>{}(groups + "#" + choices);
  }
  return out;
}

std::string expand(Rng& rng, std::string_view t) {
  PhraseUse ignored;
  return expand(rng, t, ignored);
}

std::string fmt_num(double v, int decimals) {
  double scale = std::pow(10.0, decimals);
  double r = std::round(v * scale) / scale;
  if (r == 0.0) r = 0.0;  // no "-0"
  bool neg = r < 0;
  double a = std::fabs(r);
  double ip = std::floor(a + 1e-9);
  long long whole = (long long)ip;
  long long frac = (long long)std::llround((a - ip) * scale);
  if (frac >= (long long)scale) {
    whole += 1;
    frac = 0;
  }
  std::string digits = std::to_string(whole), grouped;
  for (size_t k = 0; k < digits.size(); ++k) {
    if (k > 0 && (digits.size() - k) % 3 == 0) grouped.push_back(',');
    grouped.push_back(digits[k]);
  }
  std::string out = neg ? "-" + grouped : grouped;
  if (frac > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%0*lld", decimals, frac);
    std::string f = buf;
    while (!f.empty() && f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

std::string fmt_money(double v, const std::string& currency) {
  if (currency == "USD") return (v < 0 ? "-$" : "$") + fmt_num(std::fabs(v));
  return fmt_num(v) + " " + currency;
}

std::string join_list(const std::vector<std::string>& items, const std::string& conj) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += (i + 1 == items.size()) ? " " + conj + " " : ", ";
    out += items[i];
  }
  return out;
}

std::string capitalize(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = char(s[0] - 'a' + 'A');
  return s;
}

std::string readable(const std::string& label) {
  std::string s = label;
  for (auto& c : s)
    if (c == '_') c = ' ';
  return s;
}

}  // namespace trex::ordata
