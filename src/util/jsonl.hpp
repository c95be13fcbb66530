// Streaming JSON Lines: a reader that yields one parsed object per non-empty line and names
// file:line in every error, and a writer that commits atomically (nothing half-written on failure).
#pragma once
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace trex {

using Json = nlohmann::json;

class JsonlReader {
 public:
  explicit JsonlReader(const std::filesystem::path& path);
  // Next record, or nullopt at end of file. Blank lines are skipped. Throws trex::Error
  // "file:line: invalid JSON ..." on malformed lines or invalid UTF-8.
  std::optional<Json> next();
  long line() const { return line_; }  // line of the record last returned
  SourceLocation where() const { return {path_, line_, 0}; }

 private:
  std::string path_;
  std::ifstream in_;
  long line_ = 0;
};

class JsonlWriter {
 public:
  explicit JsonlWriter(const std::filesystem::path& path) : file_(path) {}
  void write(const Json& record);  // one compact line, keys in insertion order as given
  void commit() { file_.commit(); }
  long count() const { return count_; }

 private:
  AtomicFile file_;
  long count_ = 0;
};

// Parses a whole JSON document; errors name the file and line.
Json parse_json_file(const std::filesystem::path& path);
Json parse_json_text(const std::string& text, const SourceLocation& where);

// Field access with errors naming the record's location: "file:line: field 'x' missing / not a string".
const Json& require_field(const Json& obj, const char* key, const SourceLocation& where);
std::string require_string(const Json& obj, const char* key, const SourceLocation& where);

}  // namespace trex
