// OpenAI-compatible chat server (cpp-httplib): POST /v1/chat/completions (JSON and SSE streaming),
// GET /v1/models, GET /health. Every bad request gets an HTTP error in OpenAI's error format and the
// server keeps serving. Generation is delegated to a ChatGenerator (the trex model, or a test double).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trex::infer {

struct ChatTurn {
  std::string role;  // system | user | assistant
  std::string content;
};

struct GenerationRequest {
  std::vector<ChatTurn> messages;
  int max_tokens = 256;
  double temperature = 1.0;
  double top_p = 1.0;
  int top_k = 0;  // 0 = off
  std::optional<uint64_t> seed;
  std::vector<std::string> stop;
  bool logprobs = false;  // OpenAI's logprobs / top_logprobs (0..20)
  int top_logprobs = 0;
};

// One generated token's entry of OpenAI's choices[].logprobs.content.
struct TokenScore {
  std::string token;           // its text (invalid UTF-8 replaced; `bytes` keeps the raw bytes)
  std::vector<uint8_t> bytes;
  double logprob = 0;
  std::vector<TokenScore> top;  // the most likely alternatives (their own `top` empty)
};

struct GenerationResult {
  std::string text;
  std::string finish_reason = "stop";  // stop | length
  int prompt_tokens = 0, completion_tokens = 0;
  std::vector<TokenScore> logprobs;  // filled when the request asked for logprobs
};

// Receives each new piece of text as it is generated; return false to stop early (client gone).
using DeltaCallback = std::function<bool(const std::string& delta)>;

class ChatGenerator {
 public:
  virtual ~ChatGenerator() = default;
  virtual GenerationResult generate(const GenerationRequest& request, const DeltaCallback& on_delta) = 0;
  virtual int max_context_tokens() const = 0;
  // The prompt's length in tokens as generate() would feed it (chat template applied), or -1 if unknown. The server
  // answers a prompt that does not fit max_context_tokens() with HTTP 400 context_length_exceeded before generating.
  virtual int prompt_tokens(const GenerationRequest& request) const {
    (void)request;
    return -1;
  }
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;            // 0: any free port (see ChatServer::port())
  std::string model_name = "trex";
  std::string api_key;        // empty: no authentication
  int threads = 8;            // concurrent connections
  std::size_t max_body_bytes = std::size_t(8) << 20;
};

class ChatServer {
 public:
  ChatServer(ServerOptions options, std::shared_ptr<ChatGenerator> generator);
  ~ChatServer();
  // Binds; throws trex::Error if the address is taken. Returns the bound port.
  int bind();
  void serve();   // blocks until stop()
  void start();   // bind (if needed) + serve on a background thread
  void stop();
  int port() const { return port_; }
  std::string base_url() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  ServerOptions options_;
  int port_ = -1;
};

}  // namespace trex::infer
