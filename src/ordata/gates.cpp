// Quality gate checks on one exported SFT record.
#include "ordata/gates.hpp"

#include <algorithm>
#include <array>
#include <regex>

#include "ordata/domains.hpp"
#include "ordata/vocab.hpp"

namespace trex::ordata {

namespace {

bool has_separator_row(const std::string& text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    // "| --- | ---: |": only pipes, dashes (>= 3 per cell), colons and spaces, at least one cell.
    if (line.size() >= 5 && line[0] == '|' && line.find("---") != std::string::npos &&
        line.find_first_not_of("|-: ") == std::string::npos)
      return true;
    pos = end + 1;
  }
  return false;
}

bool contains_ci(const std::string& text, const std::string& needle) {
  auto it = std::search(text.begin(), text.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return std::tolower(uint8_t(a)) == std::tolower(uint8_t(b)); });
  return it != text.end();
}

const std::array<const char*, 9> kForbidden = {"placeholder", "TODO", "TBD", "N/A", "Locked", "Sc0",
                                               "Skip the rest", "lorem ipsum", "..."};

}  // namespace

bool has_forbidden_text(const std::string& text) {
  for (const char* f : kForbidden)
    if (text.find(f) != std::string::npos) return true;
  return contains_ci(text, "as an ai");
}

std::string quality_gate(const Json& rec, const std::vector<std::string>& file_families) {
  if (!rec.contains("messages") || !rec["messages"].is_array() || rec["messages"].size() != 2) return "message_count";
  const auto& u = rec["messages"][0];
  const auto& a = rec["messages"][1];
  if (u.value("role", "") != "user" || a.value("role", "") != "assistant") return "message_roles";
  if (!u["content"].is_string() || !a["content"].is_string()) return "message_content";
  std::string ut = u["content"].get<std::string>(), at = a["content"].get<std::string>();
  if (ut.empty() || at.empty()) return "empty_message";
  for (const char* f : kForbidden)
    if (at.find(f) != std::string::npos || ut.find(f) != std::string::npos) return "forbidden_text";
  if (contains_ci(at, "as an ai") || at.find("{") == 0) return "forbidden_text";
  // Unfinished: unbalanced code fences or think/model/python tags.
  size_t fences = 0;
  for (size_t p = at.find("```"); p != std::string::npos; p = at.find("```", p + 3)) ++fences;
  if (fences % 2 != 0) return "unfinished_answer";
  for (const char* tag : {"think", "model", "python"}) {
    bool open = at.find(std::string("<") + tag + ">") != std::string::npos;
    bool close = at.find(std::string("</") + tag + ">") != std::string::npos;
    if (open != close) return "unfinished_answer";
  }
  if (!rec.contains("metadata") || !rec["metadata"].is_object()) return "metadata_missing";
  const auto& m = rec["metadata"];
  for (const char* k : {"mode", "domain", "structure", "difficulty", "data_interface", "answer_style", "task", "objective", "seed"})
    if (!m.contains(k)) return "metadata_incomplete";
  Mode mode;
  Structure st;
  Difficulty d;
  Task t;
  if (!m["mode"].is_string() || !parse(m["mode"].get<std::string>(), mode)) return "metadata_vocabulary";
  if (!m["structure"].is_string()) return "metadata_vocabulary";
  if (!parse(m["structure"].get<std::string>(), st) &&
      std::find(file_families.begin(), file_families.end(), m["structure"].get<std::string>()) == file_families.end())
    return "metadata_vocabulary";
  if (!m["difficulty"].is_string() || !parse(m["difficulty"].get<std::string>(), d)) return "metadata_vocabulary";
  if (!m["task"].is_string() || !parse(m["task"].get<std::string>(), t)) return "metadata_vocabulary";
  if (m["data_interface"] != data_interface(mode) || m["answer_style"] != answer_style(t)) return "metadata_vocabulary";
  if (!m["objective"].is_number()) return "metadata_vocabulary";
  bool known_domain = false;
  for (const auto& dom : domains()) known_domain |= m["domain"] == dom.name;
  if (!known_domain) return "metadata_vocabulary";
  if (mode == Mode::DT && !has_separator_row(ut)) return "dt_without_table";
  if (mode == Mode::DPS && (ut.find("### data.json\n```json\n") == std::string::npos)) return "dps_without_file_block";
  if (mode == Mode::DPS && m.value("data_files", "") == "json_csv" && ut.find(".csv\n```csv\n") == std::string::npos)
    return "dps_without_file_block";
  return "";
}

}  // namespace trex::ordata
