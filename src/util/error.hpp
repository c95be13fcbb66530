// trex::Error: the one exception type for bad input and failed operations, carrying where it happened
// (file, line, column of the input when there is one) so every message can name its source.
#pragma once
#include <stdexcept>
#include <string>

namespace trex {

struct SourceLocation {
  std::string file;  // empty when the input has no file (a string, stdin)
  long line = 0;     // 1-based; 0 = unknown
  long column = 0;   // 1-based; 0 = unknown
  std::string str() const;  // "file:line:col", "file:line", "file" or "<input>:line"
};

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message);
  Error(SourceLocation where, std::string message);
  const SourceLocation& where() const { return where_; }
  const std::string& message() const { return message_; }  // without the location prefix

 private:
  SourceLocation where_;
  std::string message_;
};

// Throws trex::Error with a location; use for input errors.
[[noreturn]] void fail_at(const SourceLocation& where, const std::string& message);

}  // namespace trex
