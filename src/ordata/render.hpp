// Problem rendering in the three representations (report §8): DP (all data in the prose), DT (data
// in Markdown tables with header separator rows) and DPS (data in attached files shown as fenced
// `### data.json` / `### name.csv` blocks: JSON only or JSON + CSV, half each). Phrasing varies per draw;
// numbers are formatted for prose.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "ordata/data_files.hpp"
#include "ordata/instance.hpp"
#include "util/rng.hpp"

namespace trex::ordata {

struct RenderedProblem {
  std::string text;  // the problem statement (story, data, rules, goal)
  Json data;         // data.json of the instance (all data, whatever the file layout)
  std::vector<DataFile> files;  // DPS attachments (empty for DP and DT)
  // The parts of `text` (intro, data, rules, goal joined by blank lines); LLM paraphrasing rewrites the
  // prose parts and keeps the data section of DT/DPS verbatim.
  std::string intro, data_section, rules, goal;
};

RenderedProblem render_problem(const Instance& inst, Mode mode, Rng& rng);

// data.json text with one top-level key per line (compact values), as shown and written for DPS.
std::string data_json_text(const Json& data);

}  // namespace trex::ordata
