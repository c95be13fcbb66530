// ChatServer over HTTP with an OpenAI-style client: JSON and SSE streaming, 16 concurrent requests,
// and a battery of malformed requests, every one answered in OpenAI's error format.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "infer/chat_server.hpp"
#include "openai_chat_testing.hpp"

using namespace trex::infer;
using Json = nlohmann::json;

namespace {

// Test double: answers "echo: <last user message>" one word per token, honouring max_tokens.
class EchoGenerator : public ChatGenerator {
 public:
  GenerationResult generate(const GenerationRequest& r, const DeltaCallback& on_delta) override {
    std::string text = "echo: " + r.messages.back().content;
    GenerationResult out;
    out.prompt_tokens = int(r.messages.size());
    std::size_t pos = 0;
    while (pos < text.size()) {
      if (out.completion_tokens == r.max_tokens) {
        out.finish_reason = "length";
        break;
      }
      std::size_t next = text.find(' ', pos + 1);
      std::string piece = text.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
      pos = next == std::string::npos ? text.size() : next;
      out.text += piece;
      ++out.completion_tokens;
      if (!on_delta(piece)) break;
    }
    return out;
  }
  int max_context_tokens() const override { return 4096; }
  int prompt_tokens(const GenerationRequest& r) const override {  // a byte per token
    int n = 0;
    for (const auto& m : r.messages) n += int(m.content.size());
    return n;
  }
};

struct Fixture {
  ChatServer server;
  httplib::Client client;
  explicit Fixture(std::string api_key = "")
      : server(ServerOptions{"127.0.0.1", 0, "trex", std::move(api_key), 16}, std::make_shared<EchoGenerator>()),
        client("127.0.0.1", (server.start(), server.port())) {}
};

using trex::infer::testing::chat_body;
using trex::infer::testing::stream_text;

}  // namespace

TEST(ChatServer, HealthAndModels) {
  Fixture f;
  auto h = f.client.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  auto m = f.client.Get("/v1/models");
  ASSERT_TRUE(m);
  EXPECT_EQ(Json::parse(m->body)["data"][0]["id"], "trex");
}

TEST(ChatServer, NonStreamingAndStreamingAgree) {
  Fixture f;
  auto r = f.client.Post("/v1/chat/completions", chat_body("hello there world").dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  Json j = Json::parse(r->body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "echo: hello there world");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["usage"]["completion_tokens"], 4);
  auto s = f.client.Post("/v1/chat/completions", chat_body("hello there world", true).dump(), "application/json");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->status, 200);
  EXPECT_NE(s->get_header_value("Content-Type").find("text/event-stream"), std::string::npos);
  std::string finish;
  EXPECT_EQ(stream_text(s->body, &finish), "echo: hello there world");
  EXPECT_EQ(finish, "stop");
  EXPECT_NE(s->body.find("data: [DONE]"), std::string::npos);
  auto cut = f.client.Post("/v1/chat/completions", chat_body("a b c d e", false, 2).dump(), "application/json");
  EXPECT_EQ(Json::parse(cut->body)["choices"][0]["finish_reason"], "length");
}

TEST(ChatServer, SixteenConcurrentRequests) {
  Fixture f;
  std::vector<std::thread> threads;
  std::vector<std::string> got(16);
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&, i] {
      httplib::Client c("127.0.0.1", f.server.port());
      // Retry a refused connection as OpenAI clients do (cpp-httplib's listen backlog is 5).
      auto body = chat_body("request " + std::to_string(i), i % 2 == 1).dump();
      auto r = c.Post("/v1/chat/completions", body, "application/json");
      for (int attempt = 1; !r && attempt < 5; ++attempt) r = c.Post("/v1/chat/completions", body, "application/json");
      if (!r || r->status != 200) return;
      got[std::size_t(i)] = i % 2 ? stream_text(r->body) : Json::parse(r->body)["choices"][0]["message"]["content"].get<std::string>();
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(got[std::size_t(i)], "echo: request " + std::to_string(i));
}

TEST(ChatServer, MalformedRequestsGetOpenAIErrorsAndServerKeepsServing) {
  Fixture f;
  struct Case {
    std::string body;
    int status;
    std::string param;
  };
  std::vector<Case> cases = {
      {"{not json", 400, ""},
      {"[1,2,3]", 400, ""},
      {R"({"messages":[{"role":"user","content":"x"}]})", 400, "model"},
      {R"({"model":"gpt-9","messages":[{"role":"user","content":"x"}]})", 404, "model"},
      {R"({"model":"trex"})", 400, "messages"},
      {R"({"model":"trex","messages":[]})", 400, "messages"},
      {R"({"model":"trex","messages":[{"role":"wizard","content":"x"}]})", 400, "messages"},
      {R"({"model":"trex","messages":[{"role":"user"}]})", 400, "messages"},
      {R"({"model":"trex","messages":[{"role":"user","content":"x"}],"max_tokens":100000000})", 400, "max_tokens"},
      {R"({"model":"trex","messages":[{"role":"user","content":"x"}],"max_tokens":-5})", 400, "max_tokens"},
      {R"({"model":"trex","messages":[{"role":"user","content":"x"}],"max_tokens":"ten"})", 400, "max_tokens"},
      {R"({"model":"trex","messages":[{"role":"user","content":"x"}],"temperature":9})", 400, "temperature"},
      {R"({"model":"trex","messages":[{"role":"user","content":"x"}],"top_p":"high"})", 400, "top_p"},
      {R"({"model":"trex","messages":[{"role":"user","content":"x"}],"stream":"yes"})", 400, "stream"},
      {R"({"model":"trex","messages":[{"role":"user","content":"x"}],"n":3})", 400, "n"},
      {R"({"model":"trex","messages":[{"role":"user","content":"x"}],"stop":[1]})", 400, "stop"},
      {R"({"model":"trex","messages":[{"role":"user","content":"x"}],"seed":1.5})", 400, "seed"},
      {"{\"model\":\"trex\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xc3\"}]}", 400, ""},
  };
  for (const auto& c : cases) {
    auto r = f.client.Post("/v1/chat/completions", c.body, "application/json");
    ASSERT_TRUE(r) << c.body;
    EXPECT_EQ(r->status, c.status) << c.body << " -> " << r->body;
    Json j = Json::parse(r->body);
    ASSERT_TRUE(j.contains("error")) << r->body;
    EXPECT_TRUE(j["error"]["message"].is_string());
    EXPECT_EQ(j["error"]["type"], "invalid_request_error");
    if (!c.param.empty()) {
      EXPECT_EQ(j["error"]["param"], c.param) << c.body;
    }
  }
  auto unknown = f.client.Get("/v1/nothing");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_TRUE(Json::parse(unknown->body).contains("error"));
  auto ok = f.client.Post("/v1/chat/completions", chat_body("still alive").dump(), "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

// A prompt longer than the context is the client's error: 400 context_length_exceeded (OpenAI's code), streaming or
// not, before anything is generated; one that fits is served.
TEST(ChatServer, PromptLongerThanTheContextIs400ContextLengthExceeded) {
  Fixture f;
  for (bool stream : {false, true}) {
    auto r = f.client.Post("/v1/chat/completions", chat_body(std::string(4096, 'x'), stream).dump(), "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    Json j = Json::parse(r->body);
    EXPECT_EQ(j["error"]["code"], "context_length_exceeded");
    EXPECT_EQ(j["error"]["param"], "messages");
    EXPECT_EQ(j["error"]["type"], "invalid_request_error");
    EXPECT_NE(j["error"]["message"].get<std::string>().find("4096 tokens"), std::string::npos) << r->body;
  }
  auto ok = f.client.Post("/v1/chat/completions", chat_body(std::string(4095, 'x')).dump(), "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
}

TEST(ChatServer, ApiKeyIsEnforcedWhenSet) {
  Fixture f("sk-test");
  auto r = f.client.Post("/v1/chat/completions", chat_body("x").dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  httplib::Headers h = {{"Authorization", "Bearer sk-test"}};
  auto ok = f.client.Post("/v1/chat/completions", h, chat_body("x").dump(), "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}
