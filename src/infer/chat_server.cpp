// ChatServer: request validation, OpenAI response shapes, SSE streaming.
#include "infer/chat_server.hpp"

#include <httplib.h>

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "util/error.hpp"
#include "util/hash.hpp"

namespace trex::infer {
using Json = nlohmann::json;

namespace {

Json error_body(const std::string& message, const std::string& type, const std::string& param = "",
                const std::string& code = "") {
  Json e = {{"message", message}, {"type", type}, {"param", param.empty() ? Json() : Json(param)},
            {"code", code.empty() ? Json() : Json(code)}};
  return Json{{"error", e}};
}

// Error bodies quote the client's input (a JSON parser's message shows the bytes it stopped at), which may be
// invalid UTF-8: dumped with replacement characters, never throwing (a throw here was answered 500).
std::string dump_safe(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

void send_error(httplib::Response& res, int status, const std::string& message, const std::string& type,
                const std::string& param = "", const std::string& code = "") {
  res.status = status;
  res.set_content(dump_safe(error_body(message, type, param, code)), "application/json");
}

struct BadRequest {
  int status;
  std::string message, param, code;
};

// Parses and validates a chat-completions body; throws BadRequest.
GenerationRequest parse_request(const std::string& body, const ServerOptions& opt, int max_context, bool& stream,
                                std::string& model) {
  Json j;
  try {
    j = Json::parse(body);
  } catch (const Json::parse_error& e) {
    throw BadRequest{400, std::string("request body is not valid JSON: ") + e.what(), "", "invalid_json"};
  }
  if (!j.is_object()) throw BadRequest{400, "request body must be a JSON object", "", ""};
  auto it = j.find("model");
  if (it == j.end() || !it->is_string()) throw BadRequest{400, "'model' is required and must be a string", "model", ""};
  model = it->get<std::string>();
  if (model != opt.model_name)
    throw BadRequest{404, "The model '" + model + "' does not exist (this server serves '" + opt.model_name + "')",
                     "model", "model_not_found"};
  GenerationRequest r;
  it = j.find("messages");
  if (it == j.end() || !it->is_array() || it->empty())
    throw BadRequest{400, "'messages' is required and must be a non-empty array", "messages", ""};
  for (const auto& m : *it) {
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      throw BadRequest{400, "each message needs a string 'role'", "messages", ""};
    std::string role = m["role"];
    if (role != "system" && role != "user" && role != "assistant" && role != "developer")
      throw BadRequest{400, "unsupported role '" + role + "'", "messages", ""};
    std::string content;
    if (m.contains("content") && m["content"].is_string()) {
      content = m["content"];
    } else if (m.contains("content") && m["content"].is_array()) {
      for (const auto& part : m["content"])  // [{"type":"text","text":...}]
        if (part.is_object() && part.value("type", "") == "text" && part.contains("text") && part["text"].is_string())
          content += part["text"].get<std::string>();
        else
          throw BadRequest{400, "only text content parts are supported", "messages", ""};
    } else if (!(m.contains("content") && m["content"].is_null() && role == "assistant")) {
      throw BadRequest{400, "each message needs string 'content'", "messages", ""};
    }
    r.messages.push_back({role == "developer" ? "system" : role, content});
  }
  auto number = [&](const char* key, double lo, double hi, double& out) {
    auto f = j.find(key);
    if (f == j.end() || f->is_null()) return;
    if (!f->is_number()) throw BadRequest{400, std::string("'") + key + "' must be a number", key, ""};
    double v = f->get<double>();
    if (!(v >= lo && v <= hi))
      throw BadRequest{400, std::string("'") + key + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi), key, ""};
    out = v;
  };
  number("temperature", 0.0, 2.0, r.temperature);
  number("top_p", 0.0, 1.0, r.top_p);
  double top_k = 0;
  number("top_k", 0, 1e6, top_k);
  r.top_k = int(top_k);
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    auto f = j.find(key);
    if (f == j.end() || f->is_null()) continue;
    if (!f->is_number_integer() || f->get<long long>() < 1)
      throw BadRequest{400, std::string("'") + key + "' must be a positive integer", key, ""};
    if (f->get<long long>() > max_context)
      throw BadRequest{400, std::string("'") + key + "' = " + std::to_string(f->get<long long>()) +
                               " exceeds the model's context of " + std::to_string(max_context) + " tokens",
                       key, "context_length_exceeded"};
    r.max_tokens = int(f->get<long long>());
  }
  if (auto f = j.find("n"); f != j.end() && !f->is_null() && (!f->is_number_integer() || f->get<long long>() != 1))
    throw BadRequest{400, "only n = 1 is supported", "n", ""};
  if (auto f = j.find("seed"); f != j.end() && !f->is_null()) {
    if (!f->is_number_integer()) throw BadRequest{400, "'seed' must be an integer", "seed", ""};
    r.seed = uint64_t(f->get<long long>());
  }
  if (auto f = j.find("stop"); f != j.end() && !f->is_null()) {
    if (f->is_string()) {
      r.stop.push_back(*f);
    } else if (f->is_array() && f->size() <= 4) {
      for (const auto& s : *f) {
        if (!s.is_string()) throw BadRequest{400, "'stop' must be a string or an array of up to 4 strings", "stop", ""};
        if (!s.get<std::string>().empty()) r.stop.push_back(s);
      }
    } else {
      throw BadRequest{400, "'stop' must be a string or an array of up to 4 strings", "stop", ""};
    }
  }
  if (auto f = j.find("logprobs"); f != j.end() && !f->is_null()) {
    if (!f->is_boolean()) throw BadRequest{400, "'logprobs' must be a boolean", "logprobs", ""};
    r.logprobs = *f;
  }
  if (auto f = j.find("top_logprobs"); f != j.end() && !f->is_null()) {
    if (!f->is_number_integer() || f->get<long long>() < 0 || f->get<long long>() > 20)
      throw BadRequest{400, "'top_logprobs' must be an integer between 0 and 20", "top_logprobs", ""};
    if (!r.logprobs) throw BadRequest{400, "'top_logprobs' requires 'logprobs' to be true", "top_logprobs", ""};
    r.top_logprobs = int(f->get<long long>());
  }
  stream = false;
  if (auto f = j.find("stream"); f != j.end() && !f->is_null()) {
    if (!f->is_boolean()) throw BadRequest{400, "'stream' must be a boolean", "stream", ""};
    stream = *f;
  }
  return r;
}

Json score_json(const TokenScore& s) {
  Json j = {{"token", s.token}, {"logprob", s.logprob}, {"bytes", s.bytes}};
  return j;
}

// OpenAI's choices[].logprobs: {"content": [{token, logprob, bytes, top_logprobs: [...]}]}, or null when not asked.
Json logprobs_json(const GenerationRequest& r, const GenerationResult& out) {
  if (!r.logprobs) return Json();
  Json content = Json::array();
  for (const auto& s : out.logprobs) {
    Json j = score_json(s);
    j["top_logprobs"] = Json::array();
    for (const auto& t : s.top) j["top_logprobs"].push_back(score_json(t));
    content.push_back(j);
  }
  return Json{{"content", content}};
}

std::string completion_id() {
  static std::atomic<uint64_t> n{0};
  auto now = std::chrono::system_clock::now().time_since_epoch().count();
  return "chatcmpl-" + sha256_hex(std::to_string(now) + ":" + std::to_string(n++)).substr(0, 24);
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

struct ChatServer::Impl {
  httplib::Server server;
  std::shared_ptr<ChatGenerator> generator;
  std::thread thread;
};

ChatServer::ChatServer(ServerOptions options, std::shared_ptr<ChatGenerator> generator)
    : impl_(std::make_unique<Impl>()), options_(std::move(options)) {
  impl_->generator = std::move(generator);
  auto& srv = impl_->server;
  const ServerOptions opt = options_;
  auto gen = impl_->generator;
  int threads = std::max(1, options_.threads);
  srv.new_task_queue = [threads] { return new httplib::ThreadPool(std::size_t(threads)); };
  srv.set_payload_max_length(options_.max_body_bytes);

  auto authorized = [opt](const httplib::Request& req, httplib::Response& res) {
    if (opt.api_key.empty()) return true;
    if (req.get_header_value("Authorization") == "Bearer " + opt.api_key) return true;
    send_error(res, 401, "Incorrect API key provided", "invalid_request_error", "", "invalid_api_key");
    return false;
  };

  srv.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"ok"})", "application/json");
  });
  srv.Get("/v1/models", [opt, authorized](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    Json j = {{"object", "list"},
              {"data", {{{"id", opt.model_name}, {"object", "model"}, {"created", 0}, {"owned_by", "trex"}}}}};
    res.set_content(j.dump(), "application/json");
  });
  srv.Post("/v1/chat/completions", [opt, gen, authorized](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    GenerationRequest greq;
    bool stream = false;
    std::string model;
    try {
      greq = parse_request(req.body, opt, gen->max_context_tokens(), stream, model);
    } catch (const BadRequest& b) {
      send_error(res, b.status, b.message, "invalid_request_error", b.param, b.code);
      return;
    }
    // OpenAI's answer to a prompt longer than the context: the client's error, before any generation starts.
    if (const int n = gen->prompt_tokens(greq), limit = gen->max_context_tokens(); n >= 0 && n >= limit) {
      send_error(res, 400,
                 "This model's maximum context length is " + std::to_string(limit) + " tokens. However, your messages "
                 "resulted in " + std::to_string(n) + " tokens. Please reduce the length of the messages.",
                 "invalid_request_error", "messages", "context_length_exceeded");
      return;
    }
    std::string id = completion_id();
    int64_t created = unix_now();
    if (!stream) {
      GenerationResult out;
      try {
        out = gen->generate(greq, [](const std::string&) { return true; });
      } catch (const std::exception& e) {
        send_error(res, 500, std::string("generation failed: ") + e.what(), "server_error");
        return;
      }
      Json j = {{"id", id},
                {"object", "chat.completion"},
                {"created", created},
                {"model", opt.model_name},
                {"choices",
                 {{{"index", 0},
                   {"message", {{"role", "assistant"}, {"content", out.text}}},
                   {"logprobs", logprobs_json(greq, out)},
                   {"finish_reason", out.finish_reason}}}},
                {"usage",
                 {{"prompt_tokens", out.prompt_tokens},
                  {"completion_tokens", out.completion_tokens},
                  {"total_tokens", out.prompt_tokens + out.completion_tokens}}}};
      res.set_content(dump_safe(j), "application/json");
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream", [gen, greq, id, created, opt](size_t, httplib::DataSink& sink) {
          auto chunk = [&](const Json& delta, const Json& finish, const Json& logprobs = Json()) {
            Json choice = {{"index", 0}, {"delta", delta}, {"finish_reason", finish}};
            if (!logprobs.is_null()) choice["logprobs"] = logprobs;
            Json j = {{"id", id},
                      {"object", "chat.completion.chunk"},
                      {"created", created},
                      {"model", opt.model_name},
                      {"choices", {choice}}};
            std::string s = "data: " + dump_safe(j) + "\n\n";
            return sink.write(s.data(), s.size());
          };
          if (!chunk({{"role", "assistant"}, {"content", ""}}, Json())) return false;
          GenerationResult out;
          try {
            out = gen->generate(greq, [&](const std::string& d) { return chunk({{"content", d}}, Json()); });
          } catch (const std::exception& e) {
            std::string s = "data: " + error_body(std::string("generation failed: ") + e.what(), "server_error").dump() + "\n\n";
            sink.write(s.data(), s.size());
            sink.done();
            return true;
          }
          // Text pieces are held back around stop strings and split characters, so they do not align with tokens:
          // a stream's token scores come together in its final chunk (a client that concatenates them gets the list).
          chunk(Json::object(), out.finish_reason, logprobs_json(greq, out));
          std::string done = "data: [DONE]\n\n";
          sink.write(done.data(), done.size());
          sink.done();
          return true;
        });
  });
  srv.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string msg = res.status == 404 ? "Unknown endpoint" : res.status == 413 ? "Request body too large" : "Request error";
    res.set_content(dump_safe(error_body(msg, "invalid_request_error")), "application/json");
  });
  srv.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    send_error(res, 500, "internal error", "server_error");
  });
}

ChatServer::~ChatServer() { stop(); }

int ChatServer::bind() {
  if (port_ >= 0) return port_;
  auto& srv = impl_->server;
  if (options_.port == 0) {
    port_ = srv.bind_to_any_port(options_.host);
  } else {
    port_ = srv.bind_to_port(options_.host, options_.port) ? options_.port : -1;
  }
  if (port_ < 0) throw Error("cannot listen on " + options_.host + ":" + std::to_string(options_.port));
  return port_;
}

void ChatServer::serve() {
  bind();
  impl_->server.listen_after_bind();
}

void ChatServer::start() {
  bind();
  impl_->thread = std::thread([this] { impl_->server.listen_after_bind(); });
  while (!impl_->server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void ChatServer::stop() {
  if (!impl_) return;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::string ChatServer::base_url() const { return "http://" + options_.host + ":" + std::to_string(port_) + "/v1"; }

}  // namespace trex::infer
