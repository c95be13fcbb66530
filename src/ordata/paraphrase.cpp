// LLM paraphrasing of problem statements and the checks a paraphrase must pass.
#include "ordata/paraphrase.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "ordata/gates.hpp"

namespace trex::ordata {

namespace {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_word(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; }

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool starts_with_ci(const std::string& text, const std::string& prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  return true;
}

bool contains_value(const std::vector<double>& sorted, double v) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), v - 1e-9 * std::max(1.0, std::fabs(v)));
  return it != sorted.end() && std::fabs(*it - v) <= 1e-9 * std::max(1.0, std::fabs(v));
}

}  // namespace

std::vector<double> numbers_in(const std::string& t) {
  std::vector<double> out;
  size_t i = 0;
  while (i < t.size()) {
    if (!is_digit(t[i]) || (i > 0 && (is_word(t[i - 1]) || is_digit(t[i - 1])))) {
      ++i;
      continue;
    }
    std::string digits;
    size_t j = i;
    while (j < t.size() && is_digit(t[j])) digits += t[j++];
    // Thousands groups: ",ddd" not followed by another digit.
    while (j + 3 < t.size() + 0 && t[j] == ',' && is_digit(t[j + 1]) && is_digit(t[j + 2]) && is_digit(t[j + 3]) &&
           (j + 4 >= t.size() || !is_digit(t[j + 4]))) {
      digits += t.substr(j + 1, 3);
      j += 4;
    }
    if (j + 1 < t.size() && t[j] == '.' && is_digit(t[j + 1])) {
      digits += '.';
      ++j;
      while (j < t.size() && is_digit(t[j])) digits += t[j++];
    }
    double v = std::stod(digits);
    if (i > 0 && t[i - 1] == '-' && (i < 2 || !is_word(t[i - 2]))) v = -v;
    out.push_back(v);
    i = j;
  }
  return out;
}

std::string check_paraphrase(const std::string& original, const std::string& paraphrase,
                             const std::vector<std::string>& required_names) {
  std::string p = trim(paraphrase);
  if (p.empty() || p.size() * 2 < original.size() || p.size() > original.size() * 3) return "llm_garbage";
  if (p.find("```") != std::string::npos || p.find("<think>") != std::string::npos || p.find("</") != std::string::npos)
    return "llm_garbage";
  for (const char* preamble : {"sure", "here is", "here's", "certainly", "paraphrase", "rewritten"})
    if (starts_with_ci(p, preamble)) return "llm_garbage";
  if (has_forbidden_text(p)) return "llm_garbage";
  std::vector<double> have = numbers_in(p);
  std::sort(have.begin(), have.end());
  for (double v : numbers_in(original))
    if (!contains_value(have, v) && !contains_value(have, std::fabs(v))) return "llm_missing_number";
  for (const auto& name : required_names)
    if (p.find(name) == std::string::npos) return "llm_missing_name";
  return "";
}

Paraphraser::Paraphraser(const LlmOptions& o)
    : client_([&] {
        chat::ClientConfig c;
        c.base_url = o.base_url;
        c.model = o.model;
        c.api_key_env = o.api_key_env;
        c.max_tries = o.max_tries;
        c.read_timeout_s = o.timeout_s;
        c.connect_timeout_s = std::min(10.0, o.timeout_s);
        c.cache_dir = o.cache_dir;
        return c;
      }()),
      temperature_(o.temperature) {}

std::vector<chat::Message> Paraphraser::messages(const std::string& original) {
  return {{"system",
           "You rewrite operations-research word problems in different words (back-translation style "
           "paraphrasing). Keep every number exactly as written (same digits, same units), keep every name "
           "of a place, person, product or other entity, keep every rule and the goal. Do not add facts, "
           "do not drop any, do not solve the problem, do not use code blocks. Answer with the rewritten "
           "statement only."},
          {"user", original}};
}

ParaphraseResult Paraphraser::paraphrase(const std::string& original, const std::vector<std::string>& required_names,
                                         uint64_t seed) const {
  chat::SamplingParams sp;
  sp.temperature = temperature_;
  sp.top_p = 0.95;
  sp.max_tokens = int(std::min<size_t>(8192, 256 + original.size()));
  sp.seed = int64_t(seed & 0x7fffffffffffULL);
  chat::Result r = client_.complete(messages(original), sp);
  ParaphraseResult out;
  if (!r.ok) {
    out.reason = "llm_request_failed";
    return out;
  }
  out.reason = check_paraphrase(original, r.content, required_names);
  if (out.reason.empty()) out.text = trim(r.content);
  return out;
}

}  // namespace trex::ordata
