// Per-family variety counts of the exported samples (see variety.hpp).
#include "ordata/variety.hpp"

#include <cctype>
#include <cmath>
#include <functional>

namespace trex::ordata {

std::vector<std::string> masked_tokens(const std::string& text) {
  std::vector<std::string> out;
  std::string tok;
  bool digit = false;
  auto flush = [&] {
    if (!tok.empty()) out.push_back(digit ? "#" : tok);
    tok.clear();
    digit = false;
  };
  for (unsigned char ch : text) {
    if (std::isalnum(ch) || ch >= 0x80) {  // UTF-8 bytes stay inside words
      tok.push_back(char(std::tolower(ch)));
      digit |= std::isdigit(ch) != 0;
    } else {
      flush();
    }
  }
  flush();
  return out;
}

void VarietyCounter::add(const std::string& structure, const Json& metadata, const Json& item, const std::string& statement) {
  Family& f = families_[structure];
  ++f.samples;
  f.variants.insert(metadata.value("variant", ""));
  f.domains.insert(metadata.value("domain", ""));
  f.narratives.insert(item.value("narrative", -1));
  f.slack_family += item.value("slack_family", false);
  if (item.contains("phrasing"))
    for (const auto& use : item["phrasing"]) {
      f.templates.insert(use[0].get<uint64_t>());
      f.phrasings.insert(use[1].get<uint64_t>());
    }
  std::vector<std::string> toks = masked_tokens(statement);
  const size_t n_of[2] = {2, 4};
  for (int g = 0; g < 2; ++g) {
    size_t n = n_of[g];
    for (size_t i = 0; i + n <= toks.size(); ++i) {
      std::string gram = toks[i];
      for (size_t k = 1; k < n; ++k) gram += ' ' + toks[i + k];
      f.grams[g].insert(std::hash<std::string>{}(gram));
      ++f.total_grams[g];
    }
  }
}

Json VarietyCounter::to_json() const {
  Json out = Json::object();
  for (const auto& [name, f] : families_) {
    auto ratio = [](size_t distinct, int64_t total) { return total > 0 ? std::round(1e4 * double(distinct) / double(total)) / 1e4 : 0.0; };
    Json j = Json::object();
    j["samples"] = f.samples;
    j["variants"] = f.variants.size();
    j["domains"] = f.domains.size();
    // -1 (a family with one narrative) counts as one scenario.
    j["narratives"] = f.narratives.size();
    j["sentence_templates"] = f.templates.size();
    j["phrasings"] = f.phrasings.size();
    j["phrasings_per_template"] = f.templates.empty() ? 0.0 : std::round(100.0 * double(f.phrasings.size()) / double(f.templates.size())) / 100.0;
    j["distinct_2"] = ratio(f.grams[0].size(), f.total_grams[0]);
    j["distinct_4"] = ratio(f.grams[1].size(), f.total_grams[1]);
    j["slack_family_samples"] = f.slack_family;
    out[name] = j;
  }
  return out;
}

}  // namespace trex::ordata
