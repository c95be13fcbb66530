// trex::Error formatting.
#include "util/error.hpp"

namespace trex {

std::string SourceLocation::str() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    s += ":" + std::to_string(line);
    if (column > 0) s += ":" + std::to_string(column);
  }
  return s;
}

static std::string with_location(const SourceLocation& w, const std::string& m) {
  if (w.file.empty() && w.line == 0) return m;
  return w.str() + ": " + m;
}

Error::Error(std::string message) : std::runtime_error(message), message_(std::move(message)) {}

Error::Error(SourceLocation where, std::string message)
    : std::runtime_error(with_location(where, message)), where_(std::move(where)), message_(std::move(message)) {}

void fail_at(const SourceLocation& where, const std::string& message) { throw Error(where, message); }

}  // namespace trex
