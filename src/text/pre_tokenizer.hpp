// The pre-tokenizer of a byte-level BPE tokenizer.json: the text is cut into pieces ("words") by a
// sequence of Split steps (regex or literal, with Hugging Face's delimiter behaviours) and a final
// ByteLevel step (optional prefix space, optional GPT-2 split regex). BPE then runs inside each piece.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/regex.hpp"
#include "util/jsonl.hpp"

namespace trex::text {

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

// A piece of pre-tokenized text. Pieces normally point into the input; a ByteLevel prefix space
// makes a new string, kept alive in PieceBuffer::owned.
struct Segment {
  size_t begin, end;
  bool is_match;
};

struct PieceBuffer {
  std::vector<std::string_view> pieces, next;
  std::vector<Segment> segments;
  std::vector<std::unique_ptr<std::string>> owned;
  void clear() {
    pieces.clear();
    next.clear();
    owned.clear();
  }
};

class PreTokenizer {
 public:
  // Parses a tokenizer.json "pre_tokenizer" value. Throws trex::Error for unsupported types, and when
  // the pipeline is not byte-level (a ByteLevel step must come last).
  static PreTokenizer from_json(const Json& j);
  // DeepSeek-V3's pre-tokenizer: digits in groups of 1-3, CJK runs isolated, then the word regex.
  static PreTokenizer deepseek_v3();

  // Cuts `text` into pieces (appended to buf.pieces, which is cleared first).
  void split(std::string_view text, PieceBuffer& buf) const;
  const Json& json() const { return json_; }

 private:
  struct Step {
    enum Kind { Split, ByteLevel } kind = Split;
    std::shared_ptr<const Regex> regex;  // Split with a Regex pattern, or ByteLevel with use_regex
    std::string literal;                 // Split with a String pattern
    SplitBehavior behavior = SplitBehavior::Isolated;
    bool invert = false;
    bool add_prefix_space = false;
  };
  static void parse_into(const Json& j, std::vector<Step>& steps);
  void apply(const Step& step, std::string_view piece, PieceBuffer& buf) const;

  std::vector<Step> steps_;
  Json json_;
};

// GPT-2's split regex (used by ByteLevel with use_regex = true).
extern const char* const kGpt2Pattern;

}  // namespace trex::text
