// OpenAI-compatible chat-completions client over HTTP (cpp-httplib): base URL, model, API key from an
// environment variable (never logged), sampling parameters, timeouts, retries with backoff on
// connection errors / 429 / 5xx, and an on-disk cache keyed by the whole request. Generic (no prompt or
// benchmark knowledge), so both `trex eval` (oreval) and `trex synth` paraphrasing (ordata) use it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace trex::chat {

struct Message {
  std::string role;  // system | user | assistant
  std::string content;
};

struct SamplingParams {
  double temperature = 0.6;
  double top_p = 1.0;
  int max_tokens = 9600;
  std::optional<int64_t> seed = 42;
  std::vector<std::string> stop;
};

struct ClientConfig {
  std::string base_url;                  // e.g. http://127.0.0.1:8000/v1
  std::string model;
  std::string api_key_env = "OPENAI_API_KEY";  // name of the variable holding the key ("" = none)
  double connect_timeout_s = 10.0;
  double read_timeout_s = 600.0;
  int max_tries = 3;                     // the report: 3 tries
  double backoff_s = 1.0;                // sleeps backoff, 2*backoff, ... between tries
  std::filesystem::path cache_dir;       // empty: no cache
};

struct Result {
  bool ok = false;
  std::string content;
  std::string finish_reason;
  std::string error;       // last error when !ok (never contains the API key)
  int http_status = 0;     // last HTTP status, 0 for connection errors
  int tries = 0;
  bool from_cache = false;
  double seconds = 0.0;
};

class Client {
 public:
  explicit Client(ClientConfig config);  // throws trex::Error on a malformed base URL
  Result complete(const std::vector<Message>& messages, const SamplingParams& params) const;
  // The JSON body that is sent (and hashed for the cache key).
  std::string request_body(const std::vector<Message>& messages, const SamplingParams& params) const;
  const ClientConfig& config() const { return config_; }

 private:
  Result post_once(const std::string& body) const;
  ClientConfig config_;
  std::string scheme_host_port_, path_prefix_, api_key_;
};

}  // namespace trex::chat
