// JSONL reader/writer on nlohmann::json.
#include "util/jsonl.hpp"

namespace trex {

JsonlReader::JsonlReader(const std::filesystem::path& path) : path_(path.string()), in_(path, std::ios::binary) {
  if (!in_) throw Error(SourceLocation{path_}, "cannot open file");
}

static long line_of_byte(const std::string& text, std::size_t byte) {
  long line = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

Json parse_json_text(const std::string& text, const SourceLocation& where) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    SourceLocation w = where;
    if (w.line == 0) w.line = line_of_byte(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string msg = e.what();
    auto pos = msg.find("] ");
    throw Error(w, "invalid JSON: " + (pos == std::string::npos ? msg : msg.substr(pos + 2)));
  }
}

std::optional<Json> JsonlReader::next() {
  std::string s;
  while (std::getline(in_, s)) {
    ++line_;
    if (!s.empty() && s.back() == '\r') s.pop_back();
    if (s.find_first_not_of(" \t") == std::string::npos) continue;
    return parse_json_text(s, SourceLocation{path_, line_, 0});
  }
  if (in_.bad()) throw Error(SourceLocation{path_, line_, 0}, "read failed");
  return std::nullopt;
}

void JsonlWriter::write(const Json& record) {
  std::string s = record.dump(-1, ' ', false, Json::error_handler_t::strict);
  s.push_back('\n');
  file_.write(s);
  ++count_;
}

Json parse_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_file(path), SourceLocation{path.string()});
}

const Json& require_field(const Json& obj, const char* key, const SourceLocation& where) {
  if (!obj.is_object()) throw Error(where, "expected a JSON object");
  auto it = obj.find(key);
  if (it == obj.end()) throw Error(where, std::string("missing field '") + key + "'");
  return *it;
}

std::string require_string(const Json& obj, const char* key, const SourceLocation& where) {
  const Json& v = require_field(obj, key, where);
  if (!v.is_string()) throw Error(where, std::string("field '") + key + "' must be a string");
  return v.get<std::string>();
}

}  // namespace trex
