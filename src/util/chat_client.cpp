// chat::Client: one httplib::Client per call (thread-safe by construction), JSON via nlohmann.
#include "util/chat_client.hpp"

#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
#include "util/jsonl.hpp"

namespace trex::chat {
namespace fs = std::filesystem;

Client::Client(ClientConfig config) : config_(std::move(config)) {
  const std::string& url = config_.base_url;
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos || (url.compare(0, scheme_end, "http") != 0 && url.compare(0, scheme_end, "https") != 0))
    throw Error("base URL must start with http:// or https:// (got '" + url + "')");
  auto path_start = url.find('/', scheme_end + 3);
  scheme_host_port_ = path_start == std::string::npos ? url : url.substr(0, path_start);
  path_prefix_ = path_start == std::string::npos ? "" : url.substr(path_start);
  while (!path_prefix_.empty() && path_prefix_.back() == '/') path_prefix_.pop_back();
  if (scheme_host_port_.size() <= scheme_end + 3) throw Error("base URL has no host: '" + url + "'");
  if (!config_.api_key_env.empty())
    if (const char* k = std::getenv(config_.api_key_env.c_str())) api_key_ = k;
  if (config_.max_tries < 1) config_.max_tries = 1;
}

std::string Client::request_body(const std::vector<Message>& messages, const SamplingParams& p) const {
  Json body;
  body["model"] = config_.model;
  body["messages"] = Json::array();
  for (const auto& m : messages) body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  body["temperature"] = p.temperature;
  body["top_p"] = p.top_p;
  body["max_tokens"] = p.max_tokens;
  body["n"] = 1;
  if (p.seed) body["seed"] = *p.seed;
  body["stop"] = p.stop;
  body["stream"] = false;
  return body.dump();
}

Result Client::post_once(const std::string& body) const {
  Result r;
  httplib::Client cli(scheme_host_port_);
  auto to_parts = [](double s, time_t& sec, time_t& usec) {
    sec = time_t(s);
    usec = time_t((s - double(sec)) * 1e6);
  };
  time_t s, us;
  to_parts(config_.connect_timeout_s, s, us);
  cli.set_connection_timeout(s, us);
  to_parts(config_.read_timeout_s, s, us);
  cli.set_read_timeout(s, us);
  cli.set_write_timeout(s, us);
  httplib::Headers headers;
  if (!api_key_.empty()) headers.emplace("Authorization", "Bearer " + api_key_);
  auto res = cli.Post(path_prefix_ + "/chat/completions", headers, body, "application/json");
  if (!res) {
    r.error = "connection error: " + httplib::to_string(res.error());
    return r;
  }
  r.http_status = res->status;
  if (res->status != 200) {
    std::string snippet = res->body.substr(0, 300);
    r.error = "HTTP " + std::to_string(res->status) + ": " + snippet;
    return r;
  }
  try {
    Json j = Json::parse(res->body);
    const Json& choice = j.at("choices").at(0);
    const Json& content = choice.at("message").at("content");
    r.content = content.is_null() ? "" : content.get<std::string>();
    if (auto it = choice.find("finish_reason"); it != choice.end() && it->is_string()) r.finish_reason = it->get<std::string>();
    r.ok = true;
  } catch (const std::exception& e) {
    r.error = std::string("malformed response: ") + e.what();
  }
  return r;
}

Result Client::complete(const std::vector<Message>& messages, const SamplingParams& params) const {
  auto t0 = std::chrono::steady_clock::now();
  std::string body = request_body(messages, params);
  fs::path cache_file;
  if (!config_.cache_dir.empty()) {
    std::string key = sha256_hex(scheme_host_port_ + path_prefix_ + "\n" + body);
    cache_file = config_.cache_dir / key.substr(0, 2) / (key + ".json");
    std::error_code ec;
    if (fs::exists(cache_file, ec)) {
      try {
        Json j = parse_json_file(cache_file);
        Result r;
        r.ok = true;
        r.from_cache = true;
        r.content = j.at("content").get<std::string>();
        r.finish_reason = j.value("finish_reason", "");
        return r;
      } catch (const std::exception&) {
        // A damaged cache entry is ignored and overwritten.
      }
    }
  }
  Result r;
  for (int attempt = 1; attempt <= config_.max_tries; ++attempt) {
    r = post_once(body);
    r.tries = attempt;
    if (r.ok) break;
    bool retryable = r.http_status == 0 || r.http_status == 429 || r.http_status >= 500;
    if (!retryable || attempt == config_.max_tries) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(config_.backoff_s * attempt));
  }
  if (r.ok && !cache_file.empty()) {
    std::error_code ec;
    fs::create_directories(cache_file.parent_path(), ec);
    write_file_atomic(cache_file, Json{{"content", r.content}, {"finish_reason", r.finish_reason}}.dump());
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace trex::chat
