// ChatClient against the scripted server: retries, timeouts, malformed answers, API key, cache.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "oreval/client.hpp"
#include "util/error.hpp"
#include "scripted_server.hpp"

using namespace trex::oreval;
using trex::testing::ScriptedReply;
using trex::testing::ScriptedServer;
namespace fs = std::filesystem;

namespace {
ClientConfig config_for(const ScriptedServer& s) {
  ClientConfig c;
  c.base_url = s.base_url();
  c.model = "trex";
  c.backoff_s = 0.01;
  c.read_timeout_s = 1.0;
  c.api_key_env = "TREX_TEST_API_KEY";
  return c;
}
std::vector<ChatMessage> ask(const std::string& marker) { return {{"user", "question " + marker}}; }
}  // namespace

TEST(ChatClient, ReturnsContentAndSendsKeyWithoutLeakingIt) {
  ::setenv("TREX_TEST_API_KEY", "sk-secret-123", 1);
  ScriptedServer s({{"[ok]", {ScriptedReply::Content, "hello"}}, {"[bad]", {ScriptedReply::Http500, ""}}});
  ChatClient c(config_for(s));
  auto r = c.complete(ask("[ok]"), {});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.content, "hello");
  EXPECT_EQ(r.tries, 1);
  EXPECT_EQ(s.last_authorization(), "Bearer sk-secret-123");
  auto bad = c.complete(ask("[bad]"), {});
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.error.find("sk-secret"), std::string::npos);
  ::unsetenv("TREX_TEST_API_KEY");
}

TEST(ChatClient, RetriesServerErrorsAndDroppedConnections) {
  ScriptedServer s({{"[500]", {ScriptedReply::Http500, ""}}, {"[drop]", {ScriptedReply::Drop, ""}}});
  ChatClient c(config_for(s));
  auto r = c.complete(ask("[500]"), {});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.http_status, 500);
  EXPECT_EQ(r.tries, 3);
  EXPECT_EQ(s.requests("[500]"), 3);
  auto d = c.complete(ask("[drop]"), {});
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.tries, 3);
}

TEST(ChatClient, SlowServerTimesOut) {
  ScriptedServer s({{"[slow]", {ScriptedReply::Slow, "late", 3.0}}});
  ClientConfig cfg = config_for(s);
  cfg.read_timeout_s = 0.3;
  cfg.max_tries = 2;
  ChatClient c(cfg);
  auto t0 = std::chrono::steady_clock::now();
  auto r = c.complete(ask("[slow]"), {});
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(r.ok);
  EXPECT_LT(secs, 2.5);
}

TEST(ChatClient, MalformedAnswersAreErrors) {
  ScriptedServer s({{"[mal]", {ScriptedReply::MalformedJson, ""}}, {"[null]", {ScriptedReply::NullContent, ""}}});
  ChatClient c(config_for(s));
  auto r = c.complete(ask("[mal]"), {});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("malformed"), std::string::npos);
  auto n = c.complete(ask("[null]"), {});
  EXPECT_TRUE(n.ok);
  EXPECT_EQ(n.content, "");
}

TEST(ChatClient, CacheKeyedByWholeRequest) {
  ScriptedServer s({{"[ok]", {ScriptedReply::Content, "cached answer"}}});
  ClientConfig cfg = config_for(s);
  cfg.cache_dir = fs::temp_directory_path() / ("trex_cache_test_" + std::to_string(::getpid()));
  fs::remove_all(cfg.cache_dir);
  ChatClient c(cfg);
  SamplingParams p;
  EXPECT_FALSE(c.complete(ask("[ok]"), p).from_cache);
  auto again = c.complete(ask("[ok]"), p);
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.content, "cached answer");
  EXPECT_EQ(s.requests("[ok]"), 1);
  p.seed = 43;  // a different request
  EXPECT_FALSE(c.complete(ask("[ok]"), p).from_cache);
  EXPECT_EQ(s.requests("[ok]"), 2);
  fs::remove_all(cfg.cache_dir);
}

TEST(ChatClient, BadBaseUrlIsAnError) {
  ClientConfig c;
  c.base_url = "127.0.0.1:8000";
  EXPECT_THROW(ChatClient{c}, trex::Error);
  c.base_url = "ftp://x/v1";
  EXPECT_THROW(ChatClient{c}, trex::Error);
}
