// Extraction rules. Each scanner reproduces Python's re.findall on the upstream patterns (non-
// overlapping, left to right, lazy bodies) with plain string searches: no regex backtracking.
#include "oreval/extract.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

namespace trex::oreval {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// findall(open + r"\s*(.*?)" + close, DOTALL): the captured bodies.
std::vector<std::string_view> find_fenced(std::string_view text, std::string_view open, std::string_view close) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (true) {
    std::size_t i = text.find(open, pos);
    if (i == std::string_view::npos) break;
    std::size_t j = i + open.size();
    while (j < text.size() && is_space(text[j])) ++j;
    std::size_t k = text.find(close, j);
    if (k == std::string_view::npos) break;  // no later opening can close either
    out.push_back(text.substr(j, k - j));
    pos = k + close.size();
  }
  return out;
}

// Case-insensitive findall(open + "(.*?)" + close).
std::vector<std::string_view> find_tagged_ci(std::string_view text, std::string_view open, std::string_view close) {
  std::string low = lower(text);
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (true) {
    std::size_t i = low.find(open, pos);
    if (i == std::string::npos) break;
    std::size_t j = i + open.size();
    std::size_t k = low.find(close, j);
    if (k == std::string::npos) break;
    out.push_back(text.substr(j, k - j));
    pos = k + close.size();
  }
  return out;
}

// max(items, key=len): the first of the longest.
std::string_view longest(const std::vector<std::string_view>& items) {
  std::string_view best = items.front();
  for (auto s : items)
    if (s.size() > best.size()) best = s;
  return best;
}

// Position just after the last </think> or </redacted_reasoning> (case-insensitive), or npos.
std::size_t after_last_think(std::string_view text) {
  std::string low = lower(text);
  std::size_t best = std::string::npos;
  for (std::string_view marker : {std::string_view("</think>"), std::string_view("</redacted_reasoning>")}) {
    std::size_t p = low.rfind(marker);
    if (p != std::string::npos && (best == std::string::npos || p + marker.size() > best)) best = p + marker.size();
  }
  return best;
}

std::optional<std::string> longest_python_fence(std::string_view text) {
  auto m = find_fenced(text, "```python", "```");
  if (m.empty()) return std::nullopt;
  return trim(longest(m));
}

std::optional<std::string> longest_bare_fence(std::string_view text) {
  auto m = find_fenced(text, "```", "```");
  if (m.empty()) return std::nullopt;
  return trim(longest(m));
}

std::string orgeval_once(std::string_view response) {
  std::size_t cut = after_last_think(response);
  bool marker = cut != std::string::npos;
  std::string_view tail = marker ? response.substr(cut) : response;
  std::string tail_trim = trim(tail);
  if (marker) tail = tail_trim;
  if (auto c = longest_python_fence(tail)) return *c;
  if (auto c = longest_python_fence(response)) return *c;
  if (auto c = longest_bare_fence(tail)) return *c;
  if (auto c = longest_bare_fence(response)) return *c;
  if (marker && !tail_trim.empty()) return tail_trim;
  return std::string(response);
}

bool has_objective_keyword(std::string_view block) {
  std::string low = lower(block);
  for (const char* kw : {"minimize", "maximize", "minimise", "maximise", "minimum", "maximum", "min", "max"}) {
    std::size_t p = 0;
    while ((p = low.find(kw, p)) != std::string::npos) {
      bool line_start = p == 0 || low[p - 1] == '\n';
      std::size_t e = p + std::char_traits<char>::length(kw);
      bool word_end = e >= low.size() || is_space(low[e]);
      if (line_start && word_end) return true;
      p = e;
    }
  }
  return false;
}

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// "pyomo.environ as pyo" -> "pyomo"; "" when the text does not start with a module name.
std::string top_module(std::string_view dotted) {
  std::size_t b = 0;
  while (b < dotted.size() && is_space(dotted[b])) ++b;
  std::size_t e = b;
  while (e < dotted.size() && is_ident_char(dotted[e])) ++e;
  if (e == b || std::isdigit(static_cast<unsigned char>(dotted[b]))) return "";
  return std::string(dotted.substr(b, e - b));
}

bool starts_with_word(std::string_view s, std::string_view word) {
  return s.substr(0, word.size()) == word && s.size() > word.size() && is_space(s[word.size()]);
}

}  // namespace

std::vector<std::string> imported_modules(std::string_view code) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](std::string m) {
    if (!m.empty() && seen.insert(m).second) out.push_back(std::move(m));
  };
  std::size_t pos = 0;
  while (pos <= code.size()) {
    std::size_t nl = code.find('\n', pos);
    std::string_view line = code.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? code.size() + 1 : nl + 1;
    if (std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::size_t start = 0;
    while (start <= line.size()) {  // statements separated by ';'
      std::size_t semi = line.find(';', start);
      std::string_view stmt = line.substr(start, semi == std::string_view::npos ? std::string_view::npos : semi - start);
      start = semi == std::string_view::npos ? line.size() + 1 : semi + 1;
      std::size_t b = 0;
      while (b < stmt.size() && is_space(stmt[b])) ++b;
      stmt = stmt.substr(b);
      if (starts_with_word(stmt, "import")) {
        std::string_view names = stmt.substr(6);
        std::size_t p = 0;
        while (p <= names.size()) {  // import a.b as c, d
          std::size_t comma = names.find(',', p);
          add(top_module(names.substr(p, comma == std::string_view::npos ? std::string_view::npos : comma - p)));
          p = comma == std::string_view::npos ? names.size() + 1 : comma + 1;
        }
      } else if (starts_with_word(stmt, "from")) {
        std::string_view rest = stmt.substr(4);
        std::string m = top_module(rest);
        std::size_t after = rest.find(m) + m.size();
        while (after < rest.size() && (is_ident_char(rest[after]) || rest[after] == '.')) ++after;
        if (!m.empty() && starts_with_word(trim(rest.substr(after)), "import")) add(m);
      }
    }
  }
  return out;
}

const std::vector<std::string>& unsupported_modelling_modules() {
  static const std::vector<std::string> mods = {
      "pyomo", "ortools", "cvxpy", "cvxopt", "scipy", "mip", "docplex", "cplex", "xpress", "highspy", "mosek",
      "picos", "gekko", "pyscipopt", "amplpy", "casadi", "linopy", "pyoptinterface", "gamspy", "lpsolve55"};
  return mods;
}

AnswerApi detect_api(std::string_view code) {
  AnswerApi a;
  auto mods = imported_modules(code);
  for (const auto& m : mods)
    if (m == "gurobipy" || m == "coptpy" || m == "pulp") {
      a.api = m;
      a.explicit_import = true;
      return a;
    }
  const auto& known = unsupported_modelling_modules();
  for (const auto& m : mods)
    if (std::find(known.begin(), known.end(), m) != known.end()) {
      a.unsupported = m;
      return a;
    }
  a.api = "gurobipy";
  return a;
}

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

std::string extract_code_solver(std::string_view response) {
  if (auto c = longest_python_fence(response)) return *c;
  auto bare = find_fenced(response, "```", "```");
  if (!bare.empty()) {
    std::vector<std::string_view> substantial;
    for (auto b : bare)
      if (trim(b).size() > 50) substantial.push_back(b);
    return trim(longest(substantial.empty() ? bare : substantial));
  }
  auto tagged = find_tagged_ci(response, "<python>", "</python>");
  if (!tagged.empty()) {
    std::string best;
    for (auto t : tagged) {
      std::string s = trim(t);
      if (s.size() > best.size()) best = s;
    }
    return best;
  }
  std::size_t cut = after_last_think(response);
  if (cut != std::string::npos) {
    std::string tail = trim(response.substr(cut));
    if (!tail.empty()) return tail;
  }
  return std::string(response);
}

std::string extract_code_orgeval(std::string_view response) {
  std::string once = orgeval_once(response);
  return orgeval_once(once);
}

std::optional<std::string> extract_lp_block(std::string_view response) {
  std::size_t cut = after_last_think(response);
  std::string_view tail = cut == std::string::npos ? response : response.substr(cut);
  for (std::string_view tag : {std::string_view("```lp"), std::string_view("```LP"), std::string_view("```cplex")}) {
    auto m = find_fenced(tail, tag, "```");
    if (!m.empty()) return trim(longest(m));
  }
  auto bare = find_fenced(tail, "```", "```");
  std::vector<std::string_view> lp_like;
  for (auto b : bare)
    if (has_objective_keyword(b)) lp_like.push_back(b);
  if (!lp_like.empty()) return trim(longest(lp_like));
  // Unfenced: from the first line that is an objective keyword to the last "End" line.
  std::string low = lower(tail);
  std::size_t start = std::string::npos;
  for (const char* kw : {"minimize", "maximize"}) {
    std::size_t p = 0;
    while ((p = low.find(kw, p)) != std::string::npos) {
      if (p == 0 || low[p - 1] == '\n') {
        start = std::min(start, p);
        break;
      }
      p += 1;
    }
  }
  if (start == std::string::npos) return std::nullopt;
  std::size_t end = low.rfind("\nend");
  if (end == std::string::npos || end < start) return trim(tail.substr(start));
  return trim(tail.substr(start, end + 4 - start));
}

}  // namespace trex::oreval
