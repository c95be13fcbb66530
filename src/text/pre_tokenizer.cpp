// Pre-tokenizer pipeline: Split (Hugging Face semantics for every delimiter behaviour) and ByteLevel.
#include "text/pre_tokenizer.hpp"

#include "text/byte_level.hpp"
#include "util/error.hpp"

namespace trex::text {

const char* const kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

SplitBehavior parse_behavior(const std::string& s) {
  if (s == "Removed") return SplitBehavior::Removed;
  if (s == "Isolated") return SplitBehavior::Isolated;
  if (s == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (s == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (s == "Contiguous") return SplitBehavior::Contiguous;
  throw Error("pre_tokenizer: unknown Split behavior '" + s + "'");
}

// Length of the character starting at s[i] (1 for an invalid byte), so empty matches advance safely.
size_t char_len(std::string_view s, size_t i) {
  size_t j = i;
  next_codepoint(s, j);
  return j - i;
}

}  // namespace

void PreTokenizer::parse_into(const Json& j, std::vector<Step>& steps) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    throw Error("pre_tokenizer: expected an object with a \"type\"");
  std::string type = j["type"];
  if (type == "Sequence") {
    if (!j.contains("pretokenizers") || !j["pretokenizers"].is_array())
      throw Error("pre_tokenizer: Sequence without \"pretokenizers\"");
    for (const Json& sub : j["pretokenizers"]) parse_into(sub, steps);
    return;
  }
  Step step;
  if (type == "Split") {
    step.kind = Step::Split;
    const Json& pat = j.at("pattern");
    if (pat.contains("Regex")) {
      step.regex = std::make_shared<Regex>(pat["Regex"].get<std::string>());
    } else if (pat.contains("String")) {
      step.literal = pat["String"].get<std::string>();
      if (step.literal.empty()) throw Error("pre_tokenizer: Split with an empty String pattern");
    } else {
      throw Error("pre_tokenizer: Split pattern must be {\"Regex\": ...} or {\"String\": ...}");
    }
    step.behavior = parse_behavior(j.value("behavior", std::string("Isolated")));
    step.invert = j.value("invert", false);
  } else if (type == "ByteLevel") {
    step.kind = Step::ByteLevel;
    step.add_prefix_space = j.value("add_prefix_space", true);
    if (j.value("use_regex", true)) step.regex = std::make_shared<Regex>(kGpt2Pattern);
  } else {
    throw Error("pre_tokenizer: type '" + type + "' is not supported (supported: Sequence, Split, ByteLevel)");
  }
  steps.push_back(std::move(step));
}

PreTokenizer PreTokenizer::from_json(const Json& j) {
  PreTokenizer p;
  if (j.is_null()) throw Error("pre_tokenizer: missing; only byte-level BPE tokenizers are supported");
  parse_into(j, p.steps_);
  if (p.steps_.empty() || p.steps_.back().kind != Step::ByteLevel)
    throw Error("pre_tokenizer: the last step must be ByteLevel (only byte-level BPE tokenizers are supported)");
  for (size_t i = 0; i + 1 < p.steps_.size(); ++i)
    if (p.steps_[i].kind == Step::ByteLevel)
      throw Error("pre_tokenizer: ByteLevel is only supported as the last step");
  p.json_ = j;
  return p;
}

PreTokenizer PreTokenizer::deepseek_v3() {
  Json j = Json::parse(R"JSON({"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": false},
    {"type": "Split", "pattern": {"Regex": "[一-龥぀-ゟ゠-ヿ]+"}, "behavior": "Isolated", "invert": false},
    {"type": "Split", "pattern": {"Regex": "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false},
    {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]})JSON");
  return from_json(j);
}

void PreTokenizer::apply(const Step& step, std::string_view piece, PieceBuffer& buf) const {
  auto& out = buf.next;
  if (step.kind == Step::ByteLevel) {
    if (step.add_prefix_space && (piece.empty() || piece.front() != ' ')) {
      buf.owned.push_back(std::make_unique<std::string>(" " + std::string(piece)));
      piece = *buf.owned.back();
    }
    if (!step.regex) {
      if (!piece.empty()) out.push_back(piece);
      return;
    }
    // GPT-2 regex with Isolated behaviour
  }
  // Segments covering the piece: matches and the gaps between them (Hugging Face's find_matches).
  auto& segs = buf.segments;
  segs.clear();
  size_t cursor = 0, search = 0;
  while (search <= piece.size()) {
    size_t mb = 0, me = 0;
    bool found;
    if (step.regex) {
      found = step.regex->find(piece, search, mb, me);
    } else {
      size_t at = piece.find(step.literal, search);
      found = at != std::string_view::npos;
      if (found) mb = at, me = at + step.literal.size();
    }
    if (!found) break;
    if (me == mb) {  // empty match: no segment, move on by one character
      if (mb >= piece.size()) break;
      search = mb + char_len(piece, mb);
      continue;
    }
    if (cursor < mb) segs.push_back({cursor, mb, false});
    segs.push_back({mb, me, true});
    cursor = search = me;
  }
  if (cursor < piece.size()) segs.push_back({cursor, piece.size(), false});
  if (step.invert)
    for (auto& s : segs) s.is_match = !s.is_match;
  // Delimiter behaviour, as the folds in tokenizers' NormalizedString::split.
  auto sub = [&](size_t b, size_t e) { return piece.substr(b, e - b); };
  size_t first_new = out.size();
  bool previous_match = false;
  switch (step.behavior) {
    case SplitBehavior::Removed:
      for (auto& s : segs)
        if (!s.is_match) out.push_back(sub(s.begin, s.end));
      break;
    case SplitBehavior::Isolated:
      for (auto& s : segs) out.push_back(sub(s.begin, s.end));
      break;
    case SplitBehavior::MergedWithPrevious:
      for (auto& s : segs) {
        if (s.is_match && !previous_match && out.size() > first_new)
          out.back() = std::string_view(out.back().data(), s.end - size_t(out.back().data() - piece.data()));
        else
          out.push_back(sub(s.begin, s.end));
        previous_match = s.is_match;
      }
      break;
    case SplitBehavior::MergedWithNext: {
      std::vector<Segment> merged;  // built back to front
      for (size_t k = segs.size(); k-- > 0;) {
        const auto& s = segs[k];
        if (s.is_match && !previous_match && !merged.empty())
          merged.back().begin = s.begin;
        else
          merged.push_back({s.begin, s.end, false});
        previous_match = s.is_match;
      }
      for (size_t k = merged.size(); k-- > 0;) out.push_back(sub(merged[k].begin, merged[k].end));
      break;
    }
    case SplitBehavior::Contiguous:
      for (size_t k = 0; k < segs.size(); ++k) {
        const auto& s = segs[k];
        if (s.is_match == previous_match && out.size() > first_new)
          out.back() = std::string_view(out.back().data(), s.end - size_t(out.back().data() - piece.data()));
        else
          out.push_back(sub(s.begin, s.end));
        previous_match = s.is_match;
      }
      break;
  }
}

void PreTokenizer::split(std::string_view text, PieceBuffer& buf) const {
  buf.clear();
  buf.pieces.push_back(text);
  for (const Step& step : steps_) {
    buf.next.clear();
    for (std::string_view piece : buf.pieces) apply(step, piece, buf);
    buf.pieces.swap(buf.next);
  }
}

}  // namespace trex::text
