// Optional LLM rendering of `trex synth` (--llm-base-url): the prose of a problem statement is
// paraphrased by an OpenAI-compatible model (one chat request, util/chat_client.hpp) and accepted only
// when it keeps the data. The checks (check_paraphrase) are pure functions of the texts:
//   llm_request_failed  no answer after the client's retries (connection error, HTTP 4xx/5xx, bad JSON)
//   llm_garbage         empty, < 0.5x or > 3x the original length, code fences or tags, a preamble
//                       ("Sure", "Here is ..."), or text the quality gates forbid
//   llm_missing_number  a number of the original (all instance data, for DP) is absent
//   llm_missing_name    a set element's label of the data is absent (DP)
// A rejected paraphrase falls back to the template statement (the sample is kept; the reason is
// counted). Responses are cached on disk keyed by the whole request, so a rerun or a resumed run
// sends nothing twice and gives the same bytes for the same server answers.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/chat_client.hpp"

namespace trex::ordata {

struct LlmOptions {
  std::string base_url;  // empty: no LLM rendering
  std::string model = "default";
  std::string api_key_env = "OPENAI_API_KEY";
  std::filesystem::path cache_dir;  // empty: OUT/llm_cache
  int max_tries = 3;
  double timeout_s = 120.0;
  double temperature = 0.7;
  bool enabled() const { return !base_url.empty(); }
};

// Numbers of a text in reading order: "1,200" and "1200" are both 1200; digits glued to a letter or an
// underscore on their left (identifiers such as x_1, P3) are not numbers.
std::vector<double> numbers_in(const std::string& text);

// Empty when `paraphrase` may replace `original`, else the rejection reason (see above).
std::string check_paraphrase(const std::string& original, const std::string& paraphrase,
                             const std::vector<std::string>& required_names);

struct ParaphraseResult {
  std::string text;    // the accepted paraphrase (empty when rejected)
  std::string reason;  // rejection reason (empty when accepted)
};

class Paraphraser {
 public:
  explicit Paraphraser(const LlmOptions& o);  // throws trex::Error on a malformed base URL
  // One request for `original` (`seed` goes into the request, so it is part of the cache key).
  ParaphraseResult paraphrase(const std::string& original, const std::vector<std::string>& required_names,
                              uint64_t seed) const;
  static std::vector<chat::Message> messages(const std::string& original);

 private:
  chat::Client client_;
  double temperature_;
};

}  // namespace trex::ordata
