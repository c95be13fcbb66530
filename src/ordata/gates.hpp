// Quality gates of the SFT toolkit (report §8): exactly two messages (user, assistant), both
// non-empty; no placeholder or unfinished text; complete metadata with every categorical field in
// its vocabulary; DT has a real Markdown table with a header separator row; DPS has a fenced data.json
// block (and a fenced CSV block when its metadata says json_csv).
#pragma once
#include <string>
#include <vector>

#include "util/jsonl.hpp"

namespace trex::ordata {

// Empty string when the SFT record passes, else the failed gate's name. `file_families`: the names of the
// family files loaded for the run (family_file.hpp), also valid structures.
std::string quality_gate(const Json& record, const std::vector<std::string>& file_families = {});

// True when a text holds a string the gates forbid (placeholders, TODO, "...", "as an AI", ...).
bool has_forbidden_text(const std::string& text);

}  // namespace trex::ordata
