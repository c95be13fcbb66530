// `trex serve` as a subprocess on 127.0.0.1 (free port) driven by an OpenAI-style HTTP client: greedy answers
// equal `trex generate`'s, streaming equals non-streaming, 16 concurrent requests, malformed requests answered
// in OpenAI's error format, API key, and the server still healthy afterwards.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "infer_test_util.hpp"
#include "openai_chat_testing.hpp"
#include "util/jsonl.hpp"
#include "benchmarks_dir.hpp"

using namespace trex::infer::testing;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Greedy, so answers can be compared with `trex generate`'s.
Json greedy_chat_body(const std::string& text, bool stream, int max_tokens) {
  Json body = chat_body(text, stream, max_tokens);
  body["temperature"] = 0;
  return body;
}

}  // namespace

TEST(ServeCli, OpenAIClientGreedyMatchesGenerateStreamingConcurrentMalformed) {
  fs::path ck = micro_checkpoint();
  ServerProcess srv({"--ckpt", ck.string(), "--max-context", "256"});
  ASSERT_GT(srv.port(), 0) << "no port in server output: " << srv.first_line();
  httplib::Client cl("127.0.0.1", srv.port());
  cl.set_read_timeout(120, 0);

  auto h = cl.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);

  // greedy: same text as `trex generate --chat`
  const std::string q = "Minimise 3x + 2y subject to x + y >= 4.";
  auto r = cl.Post("/v1/chat/completions", greedy_chat_body(q, false, 8).dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  Json j = Json::parse(r->body);
  std::string text = j["choices"][0]["message"]["content"];
  fs::path in = ck / "serve_in.jsonl", out = ck / "serve_out.jsonl";
  std::ofstream(in) << Json{{"messages", {{{"role", "user"}, {"content", q}}}}}.dump() << "\n";
  auto g = run_trex({"generate", "--ckpt", ck.string(), "--input", in.string(), "--output", out.string(),
                     "--temperature", "0", "--max-tokens", "8", "--max-context", "256"});
  ASSERT_EQ(g.status, 0);
  trex::JsonlReader rd(out);
  auto rec = rd.next();
  ASSERT_TRUE(rec);
  EXPECT_EQ((*rec)["text"], text);
  EXPECT_EQ((*rec)["completion_tokens"], j["usage"]["completion_tokens"]);

  // streaming: the deltas add up to the same text
  auto s = cl.Post("/v1/chat/completions", greedy_chat_body(q, true, 8).dump(), "application/json");
  ASSERT_TRUE(s);
  ASSERT_EQ(s->status, 200);
  std::string finish;
  EXPECT_EQ(stream_text(s->body, &finish), text);
  EXPECT_EQ(finish, j["choices"][0]["finish_reason"]);

  // 16 concurrent requests (half streaming), every one answered; identical prompts give identical answers
  std::vector<std::string> got(16);
  std::vector<int> status(16, 0);
  std::vector<std::thread> th;
  for (int i = 0; i < 16; ++i)
    th.emplace_back([&, i] {
      httplib::Client c("127.0.0.1", srv.port());
      c.set_read_timeout(300, 0);
      bool stream = i % 2 == 1;
      // Like OpenAI clients, retry a refused connection: 16 simultaneous connects can overflow the
      // listen backlog (cpp-httplib's is 5), and the kernel then drops SYNs.
      auto body = greedy_chat_body(q, stream, 4).dump();
      auto rr = c.Post("/v1/chat/completions", body, "application/json");
      for (int attempt = 1; !rr && attempt < 5; ++attempt) rr = c.Post("/v1/chat/completions", body, "application/json");
      if (!rr) return;
      status[size_t(i)] = rr->status;
      std::string fin;
      got[size_t(i)] = stream ? stream_text(rr->body, &fin)
                              : Json::parse(rr->body)["choices"][0]["message"]["content"].get<std::string>();
    });
  for (auto& t : th) t.join();
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(status[size_t(i)], 200) << "request " << i;
    EXPECT_EQ(got[size_t(i)], got[0]) << "request " << i;
  }

  // malformed requests: an OpenAI error object each, never a crash
  struct Bad {
    std::string body;
    int status;
  };
  std::vector<Bad> bad = {
      {"{not json", 400},
      {"[]", 400},
      {R"({"model":"trex"})", 400},
      {R"({"model":"trex","messages":"hi"})", 400},
      {R"({"model":"trex","messages":[{"role":"user"}]})", 400},
      {R"({"model":"other","messages":[{"role":"user","content":"x"}]})", 404},
      {R"({"model":"trex","messages":[{"role":"user","content":"x"}],"max_tokens":1000000000})", 400},
      {R"({"model":"trex","messages":[{"role":"user","content":"x"}],"max_tokens":-3})", 400},
      {R"({"model":"trex","messages":[{"role":"user","content":"x"}],"temperature":"hot"})", 400},
      // invalid UTF-8 inside the JSON string (was answered 500 "internal error")
      {"{\"model\":\"trex\",\"messages\":[{\"role\":\"user\",\"content\":\"a\xff\xfe b\"}]}", 400},
      // far beyond --max-context 256, streaming or not (was answered 500 "generation failed: ...")
      {Json{{"model", "trex"}, {"messages", {{{"role", "user"}, {"content", std::string(3000, 'x') + " y"}}}}}.dump(), 400},
      {Json{{"model", "trex"}, {"stream", true}, {"messages", {{{"role", "user"}, {"content", std::string(3000, 'x')}}}}}.dump(),
       400},
  };
  for (const auto& b : bad) {
    auto rr = cl.Post("/v1/chat/completions", b.body, "application/json");
    ASSERT_TRUE(rr) << b.body;
    EXPECT_EQ(rr->status, b.status) << b.body << " -> " << rr->body;
    Json e = Json::parse(rr->body, nullptr, false);
    EXPECT_TRUE(e.is_object() && e.contains("error") && e["error"].contains("message")) << rr->body;
  }
  auto nf = cl.Get("/v1/nothing");
  ASSERT_TRUE(nf);
  EXPECT_EQ(nf->status, 404);
  auto h2 = cl.Get("/health");
  ASSERT_TRUE(h2);
  EXPECT_EQ(h2->status, 200);
}

TEST(ServeCli, ApiKeyFromEnvironment) {
  ::setenv("TREX_TEST_SERVE_KEY", "sekrit", 1);
  ServerProcess srv({"--ckpt", micro_checkpoint().string(), "--api-key-env", "TREX_TEST_SERVE_KEY"});
  ASSERT_GT(srv.port(), 0) << srv.first_line();
  httplib::Client cl("127.0.0.1", srv.port());
  cl.set_read_timeout(60, 0);
  auto no = cl.Post("/v1/chat/completions", greedy_chat_body("x", false, 2).dump(), "application/json");
  ASSERT_TRUE(no);
  EXPECT_EQ(no->status, 401);
  httplib::Headers hd = {{"Authorization", "Bearer sekrit"}};
  auto yes = cl.Post("/v1/chat/completions", hd, greedy_chat_body("x", false, 2).dump(), "application/json");
  ASSERT_TRUE(yes);
  EXPECT_EQ(yes->status, 200) << yes->body;
  // a missing variable is a startup error
  EXPECT_EQ(run_trex({"serve", "--ckpt", micro_checkpoint().string(), "--api-key-env", "TREX_NO_SUCH_VAR_XYZ"}).status, 2);
}

// `trex eval --base-url` against `trex serve`: the harness talks to our own server end to end (every item gets an
// answer from the model and is scored; a random-init micro model answers nothing correct, so no score is
// asserted beyond the counts).
TEST(ServeCli, EvalHarnessAgainstServe) {
  const fs::path data = trex::testing::benchmarks_dir();
  ASSERT_TRUE(fs::exists(data / "nl4opt.jsonl")) << "benchmark data missing under " << data;
  ServerProcess srv({"--ckpt", micro_checkpoint().string(), "--max-context", "2048"});
  ASSERT_GT(srv.port(), 0) << srv.first_line();
  const fs::path out = fs::temp_directory_path() / ("trex_eval_vs_serve_" + std::to_string(::getpid()));
  fs::remove_all(out);
  auto r = run_trex({"eval", "--benchmarks", "nl4opt", "--data", data.string(), "--out", out.string(), "--base-url",
                     "http://127.0.0.1:" + std::to_string(srv.port()) + "/v1", "--model", "trex", "--end", "3",
                     "--max-tokens", "12", "--temperature", "0", "--concurrency", "3", "--json"});
  ASSERT_EQ(r.status, 0) << r.out;
  trex::JsonlReader rd(out / "nl4opt" / "results.jsonl");
  int n = 0;
  while (auto j = rd.next()) {
    ++n;
    EXPECT_NE((*j)["kind"], "api_error") << j->dump();
  }
  EXPECT_EQ(n, 3);
  auto summary = trex::parse_json_file(out / "summary.json");
  EXPECT_EQ(summary["benchmarks"][0]["n"], 3);
  fs::remove_all(out);
}

// OpenAI's logprobs / top_logprobs: choices[0].logprobs.content has one entry per generated token with its text,
// bytes, log-probability and alternatives — the same figures `trex generate --logprobs` prints — streaming (in
// the final chunk) or not; null when not asked; bad values are 400.
TEST(ServeCli, LogprobsAsOpenAIAndEqualToGenerate) {
  fs::path ck = micro_checkpoint();
  ServerProcess srv({"--ckpt", ck.string(), "--max-context", "256"});
  ASSERT_GT(srv.port(), 0) << "no port in server output: " << srv.first_line();
  httplib::Client cl("127.0.0.1", srv.port());
  cl.set_read_timeout(120, 0);
  const std::string q = "Maximise x subject to x <= 7.";
  Json body = greedy_chat_body(q, false, 6);
  body["logprobs"] = true;
  body["top_logprobs"] = 2;
  auto r = cl.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const Json j = Json::parse(r->body);
  const Json& content = j["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), j["usage"]["completion_tokens"].get<size_t>());
  fs::path in = ck / "serve_lp_in.jsonl", out = ck / "serve_lp_out.jsonl";
  std::ofstream(in) << Json{{"messages", {{{"role", "user"}, {"content", q}}}}}.dump() << "\n";
  auto g = run_trex({"generate", "--ckpt", ck.string(), "--input", in.string(), "--output", out.string(), "--temperature",
                     "0", "--max-tokens", "6", "--max-context", "256", "--logprobs", "2"});
  ASSERT_EQ(g.status, 0);
  trex::JsonlReader rd(out);
  auto rec = rd.next();
  ASSERT_TRUE(rec);
  ASSERT_EQ((*rec)["logprobs"].size(), content.size());
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& a = content[i];
    const Json& b = (*rec)["logprobs"][i];
    EXPECT_EQ(a["token"], b["token"]);
    EXPECT_DOUBLE_EQ(a["logprob"].get<double>(), b["logprob"].get<double>());
    EXPECT_TRUE(a["bytes"].is_array());
    ASSERT_EQ(a["top_logprobs"].size(), 2u);
    EXPECT_DOUBLE_EQ(a["top_logprobs"][1]["logprob"].get<double>(), b["top_logprobs"][1]["logprob"].get<double>());
  }
  body["stream"] = true;
  auto s = cl.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(s);
  Json streamed;
  for (size_t pos = 0; (pos = s->body.find("data: {", pos)) != std::string::npos; ++pos) {
    const Json c = Json::parse(s->body.substr(pos + 6, s->body.find("\n\n", pos) - pos - 6));
    if (c["choices"][0].contains("logprobs")) streamed = c["choices"][0]["logprobs"]["content"];
  }
  EXPECT_EQ(streamed, content);
  auto plain = cl.Post("/v1/chat/completions", greedy_chat_body(q, false, 6).dump(), "application/json");
  ASSERT_TRUE(plain);
  EXPECT_TRUE(Json::parse(plain->body)["choices"][0]["logprobs"].is_null());
  for (const char* bad : {R"("logprobs":"yes")", R"("logprobs":true,"top_logprobs":21)", R"("top_logprobs":2)"}) {
    auto rr = cl.Post("/v1/chat/completions",
                      std::string(R"({"model":"trex","messages":[{"role":"user","content":"x"}],)") + bad + "}",
                      "application/json");
    ASSERT_TRUE(rr);
    EXPECT_EQ(rr->status, 400) << bad << " -> " << rr->body;
  }
}
