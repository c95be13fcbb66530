// Data file layouts (JSON only, JSON + CSV), the reference reader and the Python loader.
#include "ordata/data_files.hpp"

#include <cctype>
#include <cmath>
#include <set>

#include "ordata/render.hpp"
#include "util/error.hpp"

namespace trex::ordata {

namespace {

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string s;
  for (size_t i = 0; i < cells.size(); ++i) s += (i ? "," : "") + csv_cell(cells[i]);
  return s + "\n";
}

// The cell text of a data value: exactly its JSON spelling, so int/float types survive the round trip.
std::string value_cell(const Json& v) { return v.dump(); }

Json parse_number(const std::string& cell, const std::string& file, size_t line) {
  bool integer = !cell.empty();
  for (size_t i = 0; i < cell.size(); ++i)
    integer &= std::isdigit(static_cast<unsigned char>(cell[i])) || (i == 0 && cell[i] == '-' && cell.size() > 1);
  try {
    size_t used = 0;
    if (integer) {
      int64_t v = std::stoll(cell, &used);
      if (used == cell.size()) return Json(v);
    } else {
      double v = std::stod(cell, &used);
      if (used == cell.size() && std::isfinite(v)) return Json(v);
    }
  } catch (const std::exception&) {
  }
  throw Error(SourceLocation{file, int(line), 0}, "not a number: '" + cell + "'");
}

std::string unit_suffix(const ParamDef& p) { return p.unit.empty() ? "" : " (" + p.unit + ")"; }

}  // namespace

const char* to_string(DataLayout l) { return l == DataLayout::JsonOnly ? "json" : "json_csv"; }

DataLayout layout_of(const std::vector<DataFile>& files) {
  for (const auto& f : files)
    if (f.kind != DataFile::Json) return DataLayout::JsonCsv;
  return DataLayout::JsonOnly;
}

std::vector<DataFile> data_files(const Instance& in, const Json& data, DataLayout layout) {
  std::vector<DataFile> out;
  if (layout == DataLayout::JsonCsv) {
    Json rest = Json::object();
    for (const auto& s : in.sets) rest[s.key] = data.at(s.key);
    std::set<std::string> names{"data.json"};
    bool collision = false;
    for (size_t s = 0; s < in.sets.size(); ++s) {
      std::vector<const ParamDef*> group;
      for (const auto& p : in.params)
        if (p.dims.size() == 1 && p.dims[0] == int(s)) group.push_back(&p);
      if (group.empty()) continue;
      DataFile f{DataFile::Columns, in.sets[s].key + ".csv", in.sets[s].key, ""};
      std::vector<std::string> head{in.sets[s].key};
      for (auto* p : group) head.push_back(p->key);
      f.content = csv_line(head);
      for (const auto& label : in.sets[s].elements) {
        std::vector<std::string> row{label};
        for (auto* p : group) row.push_back(value_cell(data.at(p->key).at(label)));
        f.content += csv_line(row);
      }
      collision |= !names.insert(f.name).second;
      out.push_back(std::move(f));
    }
    for (const auto& p : in.params) {
      if (p.dims.empty()) rest[p.key] = data.at(p.key);
      if (p.dims.size() != 2) continue;
      const auto& rows = in.sets[size_t(p.dims[0])];
      const auto& cols = in.sets[size_t(p.dims[1])];
      DataFile f{DataFile::Matrix, p.key + ".csv", p.key, ""};
      std::vector<std::string> head{rows.key};
      for (const auto& c : cols.elements) head.push_back(c);
      f.content = csv_line(head);
      for (const auto& r : rows.elements) {
        std::vector<std::string> row{r};
        for (const auto& c : cols.elements) row.push_back(value_cell(data.at(p.key).at(r).at(c)));
        f.content += csv_line(row);
      }
      collision |= !names.insert(f.name).second;
      out.push_back(std::move(f));
    }
    if (!out.empty() && !collision) {
      out.insert(out.begin(), DataFile{DataFile::Json, "data.json", "", data_json_text(rest)});
      return out;
    }
    out.clear();
  }
  out.push_back(DataFile{DataFile::Json, "data.json", "", data_json_text(data)});
  return out;
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text, const std::string& name) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  size_t i = 0, line = 1;
  bool quoted = false, cell_started = false;
  while (i < text.size()) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        i += 2;
        continue;
      }
      if (c == '"') {
        quoted = false;
        ++i;
        if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
          throw Error(SourceLocation{name, int(line), 0}, "text after a closing quote");
        continue;
      }
      if (c == '\n') ++line;
      cell += c;
      ++i;
      continue;
    }
    if (c == '"' && !cell_started) {
      quoted = cell_started = true;
      ++i;
    } else if (c == ',') {
      row.push_back(std::move(cell));
      cell.clear();
      cell_started = false;
      ++i;
    } else if (c == '\r' || c == '\n') {
      row.push_back(std::move(cell));
      cell.clear();
      cell_started = false;
      rows.push_back(std::move(row));
      row.clear();
      i += (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ? 2 : 1;
      ++line;
    } else {
      cell += c;
      cell_started = true;
      ++i;
    }
  }
  if (quoted) throw Error(SourceLocation{name, int(line), 0}, "unterminated quoted cell");
  if (cell_started || !row.empty()) {
    row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  return rows;
}

Json read_data_files(const std::vector<DataFile>& files) {
  Json data;
  bool have_json = false;
  for (const auto& f : files)
    if (f.kind == DataFile::Json) {
      try {
        data = Json::parse(f.content);
      } catch (const Json::parse_error& e) {
        throw Error(SourceLocation{f.name, 0, 0}, std::string("malformed JSON: ") + e.what());
      }
      have_json = true;
    }
  if (!have_json || !data.is_object()) throw Error("ordata: data files without a data.json object");
  for (const auto& f : files) {
    if (f.kind == DataFile::Json) continue;
    auto rows = parse_csv(f.content, f.name);
    if (rows.size() < 2) throw Error(SourceLocation{f.name, 1, 0}, "CSV table without data rows");
    const auto& head = rows[0];
    for (size_t r = 1; r < rows.size(); ++r) {
      if (rows[r].size() != head.size())
        throw Error(SourceLocation{f.name, int(r + 1), 0},
                    "row has " + std::to_string(rows[r].size()) + " cells, the header " + std::to_string(head.size()));
      const std::string& label = rows[r][0];
      for (size_t c = 1; c < head.size(); ++c) {
        Json v = parse_number(rows[r][c], f.name, r + 1);
        if (f.kind == DataFile::Columns) data[head[c]][label] = std::move(v);
        else data[f.key][label][head[c]] = std::move(v);
      }
    }
  }
  return data;
}

std::string python_imports(const std::vector<DataFile>& files) {
  return layout_of(files) == DataLayout::JsonCsv ? "import csv\nimport json\n" : "import json\n";
}

std::string python_data_loader(const std::vector<DataFile>& files) {
  std::string s;
  bool csv = layout_of(files) == DataLayout::JsonCsv;
  if (csv)
    s += "def read_csv(name):\n"
         "    with open(name, newline=\"\") as f:\n"
         "        rows = list(csv.reader(f))\n"
         "    return rows[0], rows[1:]\n\n\n"
         "def number(text):\n"
         "    return int(text) if text.lstrip(\"-\").isdigit() else float(text)\n\n\n";
  s += "with open(\"data.json\") as f:\n    data = json.load(f)\n";
  for (const auto& f : files) {
    if (f.kind == DataFile::Json) continue;
    s += "header, rows = read_csv(" + Json(f.name).dump() + ")\n";
    if (f.kind == DataFile::Columns)
      s += "for col, key in enumerate(header[1:], start=1):\n"
           "    data[key] = {row[0]: number(row[col]) for row in rows}\n";
    else
      s += "data[" + Json(f.key).dump() + "] = {row[0]: {label: number(v) for label, v in zip(header[1:], row[1:])} for row in rows}\n";
  }
  return s;
}

std::string data_key_list(const Instance& in, const std::vector<DataFile>& files) {
  bool csv = layout_of(files) == DataLayout::JsonCsv;
  auto file_of_set_params = [&](int set) -> std::string {
    for (const auto& f : files)
      if (f.kind == DataFile::Columns && f.key == in.sets[size_t(set)].key) return f.name;
    return "data.json";
  };
  std::string s;
  for (const auto& set : in.sets) s += "- `" + set.key + "`: list of " + set.description + (csv ? "; in data.json" : "") + "\n";
  for (const auto& p : in.params) {
    std::string idx;
    for (int d : p.dims) idx += (idx.empty() ? "by " : " then ") + in.sets[size_t(d)].key;
    std::string where;
    if (csv) {
      if (p.dims.empty()) where = "; in data.json";
      else if (p.dims.size() == 1) where = "; column `" + p.key + "` of " + file_of_set_params(p.dims[0]);
      else
        where = "; " + p.key + ".csv, rows " + in.sets[size_t(p.dims[0])].key + ", columns " + in.sets[size_t(p.dims[1])].key;
    }
    s += "- `" + p.key + "`: " + p.description + unit_suffix(p) + (idx.empty() ? "" : ", " + idx) + where + "\n";
  }
  return s;
}

std::string file_blocks(const std::vector<DataFile>& files) {
  std::string s;
  for (const auto& f : files) {
    std::string body = f.content;
    while (!body.empty() && body.back() == '\n') body.pop_back();
    s += (s.empty() ? "" : "\n\n") + std::string("### ") + f.name + "\n```" + (f.kind == DataFile::Json ? "json" : "csv") + "\n" +
         body + "\n```";
  }
  return s;
}

}  // namespace trex::ordata
