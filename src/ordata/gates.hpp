// Quality gates of the SFT toolkit (report §8): exactly two messages (user, assistant), both
// non-empty; no placeholder or unfinished text; complete metadata with every categorical field in
// its vocabulary; DT has a real Markdown table with a header separator row; DPS has a fenced file block.
#pragma once
#include <string>

#include "util/jsonl.hpp"

namespace trex::ordata {

// Empty string when the SFT record passes, else the failed gate's name.
std::string quality_gate(const Json& record);

}  // namespace trex::ordata
