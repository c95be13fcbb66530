// LLM paraphrasing (--llm-base-url): the number/name/garbage checks, and `trex synth` end to end against
// the scripted OpenAI-compatible server of the eval tests serving good paraphrases, paraphrases that
// drop a number, garbage (too short; a chatty preamble) and HTTP 500. Every exported item must carry
// the outcome of its own request, the manifest must count them exactly, a rerun over the response
// cache must give the same bytes, and an interrupted run must resume to the same files.
#include <functional>
#include <mutex>
#include <set>

#include "oreval/scripted_server.hpp"
#include "ordata/gates.hpp"
#include "ordata/paraphrase.hpp"
#include "synth_support.hpp"

using namespace synth_test;
using trex::Json;
using trex::testing::ScriptedReply;
using trex::testing::ScriptedServer;
using namespace trex::ordata;

TEST(Paraphrase, NumbersInText) {
  EXPECT_EQ(numbers_in("Ship 1,200 pallets at 3.5 USD, 7 days; x_1 and P3 are names; -4 degrees."),
            (std::vector<double>{1200, 3.5, 7, -4}));
  EXPECT_EQ(numbers_in("1,2,3 and 12.50. End 9."), (std::vector<double>{1, 2, 3, 12.5, 9}));
  EXPECT_TRUE(numbers_in("no digits here").empty());
}

TEST(Paraphrase, ChecksKeepNumbersAndNamesAndRejectGarbage) {
  std::string orig = "Plant Lyon ships at most 1,200 tons to Porto at 12.5 USD per ton. Demand is 300 tons.";
  std::vector<std::string> names{"Lyon", "Porto"};
  EXPECT_EQ(check_paraphrase(orig, "Porto needs 300 tons; the Lyon plant can send up to 1200 tons, each costing 12.50 USD.", names), "");
  EXPECT_EQ(check_paraphrase(orig, "Porto needs some tons; the Lyon plant can send up to 1200 tons, each costing 12.50 USD.", names),
            "llm_missing_number");
  EXPECT_EQ(check_paraphrase(orig, "Porto needs 300 tons; the Paris plant can send up to 1200 tons, each costing 12.50 USD.", names),
            "llm_missing_name");
  EXPECT_EQ(check_paraphrase(orig, "No.", names), "llm_garbage");
  EXPECT_EQ(check_paraphrase(orig, "Sure! Porto needs 300 tons; Lyon sends up to 1,200 tons at 12.5 USD per ton.", names), "llm_garbage");
  EXPECT_EQ(check_paraphrase(orig, "```\nPorto needs 300 tons; Lyon sends up to 1,200 tons at 12.5 USD per ton.\n```", names), "llm_garbage");
  EXPECT_EQ(check_paraphrase(orig, "Porto needs 300 tons; Lyon sends up to 1,200 tons at 12.5 USD per ton. TODO", names), "llm_garbage");
  EXPECT_EQ(check_paraphrase(orig, std::string(orig.size() * 4, 'a'), names), "llm_garbage");
}

namespace {

// The scripted behaviours, chosen by a hash of the statement the request carries.
enum Behaviour { Good, Good2, DropNumber, GarbageShort, GarbagePreamble, Http500, kBehaviours };

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

// The last standalone number of a text (not glued to a letter/underscore), or "" when none; an
// implementation independent of numbers_in().
std::string last_number(const std::string& t, double& value) {
  std::string found;
  for (size_t i = 0; i < t.size();) {
    if (!std::isdigit(static_cast<unsigned char>(t[i]))) {
      ++i;
      continue;
    }
    bool glued = i > 0 && (std::isalpha(static_cast<unsigned char>(t[i - 1])) || t[i - 1] == '_');
    size_t j = i;
    while (j < t.size() && (std::isdigit(static_cast<unsigned char>(t[j])) ||
                            ((t[j] == ',' || t[j] == '.') && j + 1 < t.size() && std::isdigit(static_cast<unsigned char>(t[j + 1])))))
      ++j;
    if (!glued) found = t.substr(i, j - i);
    i = j;
  }
  if (found.empty()) return "";
  std::string plain;
  for (char c : found)
    if (c != ',') plain += c;
  value = std::stod(plain);
  return found;
}

// Removes every standalone number whose value equals `value` (any spelling: 1,200 / 1200 / 1200.00).
std::string drop_value(const std::string& t, double value) {
  std::string out;
  for (size_t i = 0; i < t.size();) {
    bool glued = i > 0 && (std::isalnum(static_cast<unsigned char>(t[i - 1])) || t[i - 1] == '_');
    if (!std::isdigit(static_cast<unsigned char>(t[i])) || glued) {
      out += t[i++];
      continue;
    }
    size_t j = i;
    while (j < t.size() && (std::isdigit(static_cast<unsigned char>(t[j])) ||
                            ((t[j] == ',' || t[j] == '.') && j + 1 < t.size() && std::isdigit(static_cast<unsigned char>(t[j + 1])))))
      ++j;
    std::string tok = t.substr(i, j - i), plain;
    for (char c : tok)
      if (c != ',') plain += c;
    out += std::stod(plain) == value ? "several" : tok;
    i = j;
  }
  return out;
}

struct ParaphraseServer {
  std::mutex mu;
  std::map<std::string, std::string> expected;  // statement sent -> expected rejection ("" = taken)
  std::vector<Behaviour> served;                // behaviour of every request, in arrival order
  std::unique_ptr<ScriptedServer> server;

  static std::string good(const std::string& s) { return "Restated for the planning team. " + s; }

  ParaphraseServer() {
    trex::testing::ScriptedResponder respond = [this](const std::string& body) {
      Json req = Json::parse(body);
      std::string statement = req["messages"].back()["content"];
      Behaviour b = Behaviour(fnv1a(statement) % kBehaviours);
      ScriptedReply r;
      std::string reason;
      double value = 0;
      switch (b) {
        case Good:
        case Good2: r.content = good(statement); break;
        case DropNumber:
          if (last_number(statement, value).empty()) {
            r.content = good(statement);  // nothing to drop: a good paraphrase
          } else {
            r.content = "Restated for the planning team. " + drop_value(statement, value);
            reason = "llm_missing_number";
          }
          break;
        case GarbageShort:
          r.content = "I am not able to help with that request.";
          reason = "llm_garbage";
          break;
        case GarbagePreamble:
          r.content = "Sure, here is the rewritten statement: " + statement;
          reason = "llm_garbage";
          break;
        default:
          r.kind = ScriptedReply::Http500;
          reason = "llm_request_failed";
      }
      std::lock_guard<std::mutex> l(mu);
      expected[statement] = reason;
      served.push_back(b);
      return r;
    };
    server = std::make_unique<ScriptedServer>(std::map<std::string, ScriptedReply>{},
                                              std::map<std::string, trex::testing::ScriptedResponder>{{"\"messages\"", respond}});
  }
};

// The statement of an exported item that a request carried: the whole statement (DP) or every
// paragraph of it (DT/DPS send intro, rules and goal; the data section stays in the item).
bool carries(const std::string& user, const std::string& statement) {
  size_t pos = 0;
  while (pos <= statement.size()) {
    size_t end = statement.find("\n\n", pos);
    std::string para = statement.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (user.find(para) == std::string::npos) return false;
    if (end == std::string::npos) break;
    pos = end + 2;
  }
  return true;
}

}  // namespace

TEST(Paraphrase, SynthWithScriptedLlmCountsEveryOutcomeExactly) {
  ParaphraseServer ps;
  fs::path dir = fresh_dir("llm"), again = fresh_dir("llm_again");
  std::string args = "--count 40 --test-count 8 --seed 5 --chunk-size 16 --llm-max-tries 1 --llm-model scripted --llm-base-url " +
                     ps.server->base_url();
  int rc;
  std::string out = run(synth_cmd(dir, args + " --json"), rc);
  ASSERT_EQ(rc, 0) << out;
  auto sft = read_jsonl(dir / "sft.jsonl");
  auto test = read_jsonl(dir / "test.jsonl");
  Json man = trex::parse_json_file(dir / "manifest.json");
  ASSERT_EQ(sft.size(), 40u);
  ASSERT_EQ(test.size(), 8u);
  std::map<std::string, std::string> expected;
  std::vector<Behaviour> served;
  {
    std::lock_guard<std::mutex> l(ps.mu);
    expected = ps.expected;
    served = ps.served;
  }
  std::map<std::string, int64_t> fallbacks;
  int64_t paraphrased = 0;
  std::set<std::string> outcomes;
  auto check_item = [&](const Json& rec, const std::string& user) {
    const Json& m = rec["metadata"];
    std::vector<std::string> matches;
    for (const auto& [statement, reason] : expected)
      if (reason.empty() ? user.find(ParaphraseServer::good(statement)) != std::string::npos : carries(user, statement))
        matches.push_back(statement);
    ASSERT_EQ(matches.size(), 1u) << rec["id"] << ": no unique request for this item\n" << user;
    const std::string& reason = expected[matches[0]];
    outcomes.insert(reason);
    if (reason.empty()) {
      EXPECT_EQ(m["statement"], "llm") << rec["id"];
      EXPECT_FALSE(m.contains("llm_rejection"));
      ++paraphrased;
    } else {
      EXPECT_EQ(m["statement"], "template") << rec["id"];
      EXPECT_EQ(m["llm_rejection"], reason) << rec["id"];
      EXPECT_EQ(user.find("Restated for the planning team."), std::string::npos) << rec["id"];
      EXPECT_EQ(user.find("Sure, here is"), std::string::npos) << rec["id"];
      ++fallbacks[reason];
    }
  };
  for (const auto& r : sft) {
    EXPECT_EQ(quality_gate(r), "") << r["id"];
    check_item(r, r["messages"][0]["content"].get<std::string>());
  }
  for (const auto& r : test) check_item(r, r["problem"].get<std::string>());
  EXPECT_EQ(outcomes, (std::set<std::string>{"", "llm_missing_number", "llm_garbage", "llm_request_failed"}))
      << "the scripted run must exercise every outcome";
  EXPECT_EQ(man["llm"]["paraphrased"].get<int64_t>(), paraphrased);
  EXPECT_EQ(man["llm"]["template_fallbacks"], Json(fallbacks));
  EXPECT_EQ(man["llm"]["model"], "scripted");
  EXPECT_EQ(man["counts"]["sft"], 40);
  Json summary = Json::parse(out.substr(out.find('{')));
  EXPECT_EQ(summary["llm"]["paraphrased"].get<int64_t>(), paraphrased);

  // A rerun over the first run's response cache sends only the requests that failed (HTTP 500 is not
  // cached) and gives the same bytes.
  int64_t failed_requests = 0;
  for (Behaviour b : served) failed_requests += b == Http500;
  int before = ps.server->total_requests();
  out = run(synth_cmd(again, args + " --llm-cache " + (dir / "llm_cache").string()), rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(ps.server->total_requests() - before, failed_requests);
  for (const char* f : {"sft.jsonl", "cpt.jsonl", "test.jsonl", "manifest.json"})
    EXPECT_EQ(trex::read_file(dir / f), trex::read_file(again / f)) << f;
  fs::remove_all(dir);
  fs::remove_all(again);
}

TEST(Paraphrase, InterruptedLlmRunResumesToTheSameFiles) {
  ParaphraseServer ps;
  fs::path full = fresh_dir("llm_full"), cut = fresh_dir("llm_cut");
  std::string args = "--count 30 --test-count 4 --seed 8 --chunk-size 12 --llm-max-tries 1 --llm-base-url " + ps.server->base_url();
  int rc;
  ASSERT_EQ((run(synth_cmd(full, args), rc), rc), 0);
  std::string out = run(synth_cmd(cut, args + " --interrupt-after-chunks 1"), rc);
  EXPECT_EQ(rc, 3) << out;
  out = run(synth_cmd(cut, "--count 30 --test-count 4 --seed 8 --chunk-size 12 --llm-max-tries 1"), rc);
  EXPECT_EQ(rc, 2) << "resuming without the LLM options must be refused";
  out = run(synth_cmd(cut, args), rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_TRUE(snapshot(full) == snapshot(cut));
  fs::remove_all(full);
  fs::remove_all(cut);
}

TEST(Paraphrase, BadLlmOptionsLeaveNothingBehind) {
  fs::path dir = fresh_dir("llm_bad");
  int rc;
  for (const std::string bad : {"--llm-base-url ftp://host/v1", "--llm-base-url http://127.0.0.1:9/v1 --llm-max-tries 0",
                                "--llm-base-url http://127.0.0.1:9/v1 --llm-timeout 0"}) {
    std::string out = run(synth_cmd(dir, "--count 5 --seed 1 " + bad), rc);
    EXPECT_EQ(rc, 2) << bad << "\n" << out;
    EXPECT_NE(out.find("error: synth: --llm-"), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(dir)) << bad;
  }
}
