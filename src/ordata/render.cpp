// DP / DT / DPS problem rendering.
#include "ordata/render.hpp"

#include "ordata/domains.hpp"
#include "ordata/phrasing.hpp"

namespace trex::ordata {

namespace {

std::string unit_suffix(const ParamDef& p) { return p.unit.empty() ? "" : " (" + p.unit + ")"; }
std::string num(const ParamDef& p, double v) { return fmt_num(v, std::max(2, p.decimals)); }

// DP: one sentence per parameter (rows of a matrix become one sentence each).
std::string prose_param(const Instance& in, const ParamDef& p, Rng& rng) {
  std::string desc = p.description;
  if (p.dims.empty()) {
    return expand(rng, "{The|Its} " + desc + " {is|equals} ") + num(p, p.values[0]) + (p.unit.empty() ? "" : " " + p.unit) + ".";
  }
  const auto& rows = in.sets[size_t(p.dims[0])].elements;
  if (p.dims.size() == 1) {
    std::vector<std::string> parts;
    int style = int(rng.uniform_int(0, 2));
    for (size_t i = 0; i < rows.size(); ++i) {
      std::string l = readable(rows[i]), v = num(p, p.values[i]);
      parts.push_back(style == 1 ? v + " for " + l : l + (style == 0 ? " " : ": ") + v);
    }
    if (style == 0) return capitalize(desc) + unit_suffix(p) + ": " + join_list(parts) + ".";
    if (style == 1) return "The " + desc + " is " + join_list(parts) + unit_suffix(p) + ".";
    std::string s = capitalize(desc) + (p.unit.empty() ? "" : " in " + p.unit) + " - ";
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
    return s + ".";
  }
  const auto& cols = in.sets[size_t(p.dims[1])].elements;
  std::string s = capitalize(desc) + unit_suffix(p) + expand(rng, "{ per pair|, row by row|}:");
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> parts;
    for (size_t j = 0; j < cols.size(); ++j) parts.push_back(readable(cols[j]) + " " + num(p, p.values[i * cols.size() + j]));
    s += expand(rng, " {For|From|Row} ") + readable(rows[i]) + ": " + join_list(parts) + ".";
  }
  return s;
}

std::string md_row(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const auto& c : cells) s += " " + c + " |";
  return s + "\n";
}

std::string md_sep(size_t n, bool first_left) {
  std::string s = "|";
  for (size_t i = 0; i < n; ++i) s += (i == 0 && first_left) ? " --- |" : " ---: |";
  return s + "\n";
}

// DT: 1-D parameters grouped by their set into one table, each matrix as its own table.
std::string tables(const Instance& in, Rng& rng) {
  std::string out;
  std::vector<std::string> scalars;
  for (size_t s = 0; s < in.sets.size(); ++s) {
    std::vector<const ParamDef*> group;
    for (const auto& p : in.params)
      if (p.dims.size() == 1 && p.dims[0] == int(s)) group.push_back(&p);
    if (group.empty()) continue;
    std::vector<std::string> head{capitalize(in.sets[s].description)};
    for (auto* p : group) head.push_back(capitalize(p->description) + unit_suffix(*p));
    out += md_row(head) + md_sep(head.size(), true);
    for (size_t i = 0; i < in.sets[s].elements.size(); ++i) {
      std::vector<std::string> row{readable(in.sets[s].elements[i])};
      for (auto* p : group) row.push_back(num(*p, p->values[i]));
      out += md_row(row);
    }
    out += "\n";
  }
  for (const auto& p : in.params) {
    if (p.dims.size() == 2) {
      const auto& rs = in.sets[size_t(p.dims[0])];
      const auto& cs = in.sets[size_t(p.dims[1])];
      out += expand(rng, "{**|Table: **}") + capitalize(p.description) + unit_suffix(p) + "**\n\n";
      std::vector<std::string> head{capitalize(rs.description) + " \\ " + cs.description};
      for (const auto& c : cs.elements) head.push_back(readable(c));
      out += md_row(head) + md_sep(head.size(), true);
      for (size_t i = 0; i < rs.elements.size(); ++i) {
        std::vector<std::string> row{readable(rs.elements[i])};
        for (size_t j = 0; j < cs.elements.size(); ++j) row.push_back(num(p, p.values[i * cs.elements.size() + j]));
        out += md_row(row);
      }
      out += "\n";
    } else if (p.dims.empty()) {
      scalars.push_back("- " + capitalize(p.description) + ": " + num(p, p.values[0]) + (p.unit.empty() ? "" : " " + p.unit));
    }
  }
  for (const auto& s : scalars) out += s + "\n";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

std::string data_json_text(const Json& data) {
  std::string s = "{\n";
  size_t i = 0;
  for (auto it = data.begin(); it != data.end(); ++it, ++i)
    s += "  " + Json(it.key()).dump() + ": " + it.value().dump() + (i + 1 < data.size() ? ",\n" : "\n");
  return s + "}";
}

RenderedProblem render_problem(const Instance& in, Mode mode, Rng& rng) {
  RenderedProblem out;
  out.data = data_json(in);
  std::string data_section;
  if (mode == Mode::DP) {
    for (const auto& p : in.params) data_section += (data_section.empty() ? "" : " ") + prose_param(in, p, rng);
  } else if (mode == Mode::DT) {
    data_section = expand(rng, "{The data are given in the tables below.|The instance data:|Data:}") + "\n\n" + tables(in, rng);
  } else {
    DataLayout layout = rng.bernoulli(0.5) ? DataLayout::JsonCsv : DataLayout::JsonOnly;
    out.files = data_files(in, out.data, layout);
    data_section = (layout_of(out.files) == DataLayout::JsonOnly
                        ? expand(rng, "{The structured data files are provided below.|All numbers are in the attached file.|The data are attached as a JSON file.}")
                        : expand(rng, "{The data files are provided below: sets and scalars in data.json, tables as CSV files.|"
                                      "All numbers are in the attached JSON and CSV files.|The data are attached as a JSON file and CSV tables.}")) +
                   "\n\n" + file_blocks(out.files) + "\n\nKeys:\n" + data_key_list(in, out.files);
    while (!data_section.empty() && data_section.back() == '\n') data_section.pop_back();
  }
  std::string rules;
  if (rng.bernoulli(0.5)) {
    for (const auto& r : in.rules) rules += (rules.empty() ? "" : " ") + r;
  } else {
    for (const auto& r : in.rules) rules += (rules.empty() ? "" : "\n") + std::string("- ") + r;
  }
  out.intro = in.intro;
  out.data_section = data_section;
  out.rules = rules;
  out.goal = in.goal;
  out.text = in.intro + "\n\n" + data_section + "\n\n" + rules + "\n\n" + in.goal;
  return out;
}

}  // namespace trex::ordata
