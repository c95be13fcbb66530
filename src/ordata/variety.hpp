// Per-family variety counts of a synth run (the manifest's "families" section, issue 26 point 3): how
// many variants, domains, narrative scenarios and sentence phrasings each structure's exported samples
// drew, and the n-gram diversity of their statements, so that a family whose prose is one template
// (a single sentence pattern that identifies the generator) shows as such. Numbers are masked before
// counting n-grams ("#"), so two statements that differ only in their data count as the same text.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "util/jsonl.hpp"

namespace trex::ordata {

// Lower-cased word tokens of a text, every token holding a digit replaced by "#".
std::vector<std::string> masked_tokens(const std::string& text);

class VarietyCounter {
 public:
  // One exported item of `structure`: its metadata (variant, domain), the generator's draws as the
  // chunk item stores them ("narrative", "phrasing": [[groups, choice], ...]) and the statement text.
  void add(const std::string& structure, const Json& metadata, const Json& item, const std::string& statement);
  // {structure: {samples, variants, domains, narratives, sentence_templates, phrasings, phrasings_per_template,
  //  distinct_2, distinct_4, slack_family_samples}}.
  Json to_json() const;

 private:
  struct Family {
    int64_t samples = 0, slack_family = 0;  // ... of which a constraint family binds nowhere
    std::set<std::string> variants, domains;
    std::set<int> narratives;
    std::set<uint64_t> templates, phrasings;
    std::unordered_set<uint64_t> grams[2];    // distinct 2- and 4-grams (hashed)
    int64_t total_grams[2] = {0, 0};
  };
  std::map<std::string, Family> families_;
};

}  // namespace trex::ordata
