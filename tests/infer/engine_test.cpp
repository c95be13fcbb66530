// Engine and `trex generate`: checkpoint resolution (folder, trainer `latest`), chat template, greedy
// determinism, max tokens, stop strings (streamed deltas never contain them), and `trex generate` JSONL output
// equal to the in-process engine.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <mutex>

#include "infer/engine.hpp"
#include "infer_test_util.hpp"
#include "util/jsonl.hpp"

using namespace trex::infer;
using namespace trex::infer::testing;
namespace fs = std::filesystem;

TEST(Engine, ResolvesTrainerLatestAndRejectsMissing) {
  fs::path ck = micro_checkpoint();
  fs::path out = ck.parent_path() / (ck.filename().string() + "_train");
  fs::create_directories(out / "step-00000003");
  fs::copy_file(ck / "model.safetensors", out / "step-00000003" / "model.safetensors", fs::copy_options::overwrite_existing);
  fs::copy_file(ck / "config.json", out / "step-00000003" / "config.json", fs::copy_options::overwrite_existing);
  fs::copy_file(ck / "tokenizer.json", out / "tokenizer.json", fs::copy_options::overwrite_existing);
  std::ofstream(out / "latest") << "step-00000003\n";
  auto p = resolve_checkpoint(out);
  EXPECT_EQ(p.dir, out / "step-00000003");
  EXPECT_EQ(p.tokenizer, out / "tokenizer.json");
  std::ofstream(out / "latest") << "step-missing\n";
  EXPECT_THROW(resolve_checkpoint(out), trex::Error);
  EXPECT_THROW(resolve_checkpoint(out / "nope"), trex::Error);
  fs::remove_all(out);
}

TEST(Engine, GreedyDeterministicMaxTokensAndStop) {
  auto e = Engine::load(micro_checkpoint(), {}, 256);
  GenOptions g;
  g.sampling.temperature = 0;
  g.max_tokens = 12;
  std::vector<int32_t> prompt = e->chat_prompt({{"user", "Minimise cost subject to x + y >= 3.", ""}});
  GenOutput a = e->generate(prompt, g), b = e->generate(prompt, g);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.text, b.text);
  ASSERT_FALSE(a.tokens.empty());
  EXPECT_LE(a.tokens.size(), 12u);
  if (a.tokens.size() == 12) {
    EXPECT_EQ(a.finish_reason, "length");
  }
  // greedy continuation equals the argmax of the full-sequence forward at each step
  std::vector<int32_t> ctx = prompt;
  for (int32_t t : a.tokens) {
    auto logits = e->next_logits(ctx);
    EXPECT_EQ(argmax(std::span<const float>(logits.data(), e->tokenizer().vocab_size())), t);
    ctx.push_back(t);
  }
  // stop string: a piece of the greedy text that starts after the first token
  if (a.text.size() >= 4) {
    std::string stop = a.text.substr(a.text.size() / 2, 2);
    GenOptions gs = g;
    gs.stop = {stop};
    std::string streamed;
    GenOutput s = e->generate(prompt, gs, [&](const std::string& d) {
      streamed += d;
      return true;
    });
    EXPECT_EQ(s.text, a.text.substr(0, a.text.find(stop)));
    EXPECT_EQ(streamed, s.text);
    EXPECT_EQ(s.finish_reason, "stop");
  }
  // sampling with a seed is reproducible
  GenOptions t;
  t.sampling = {0.8, 0.9, 20, 5};
  t.max_tokens = 8;
  EXPECT_EQ(e->generate(prompt, t).tokens, e->generate(prompt, t).tokens);
}

// Batched decoding (concurrent generations share decode steps) gives every request exactly what it gets alone.
TEST(Engine, ConcurrentGenerationsAreBatchedAndEqualSoloOnes) {
  auto e = Engine::load(micro_checkpoint(), {}, 256);
  std::vector<std::vector<int32_t>> prompts;
  std::vector<GenOptions> opts;
  const char* qs[] = {"Minimise cost.", "x + y <= 4", "Maximise 3x + 2y.", "Assign workers to jobs.", "Route trucks.",
                      "Blend feeds at least cost.", "Plan production for 3 periods.", "Locate two warehouses."};
  for (int i = 0; i < 10; ++i) {
    prompts.push_back(e->chat_prompt({{"user", std::string(qs[i % 8]) + std::string(size_t(i), '!'), ""}}));
    GenOptions g;
    g.max_tokens = 10 + i;
    if (i % 3 == 0) g.sampling = {0.9, 0.95, 0, uint64_t(i)};
    else g.sampling.temperature = 0;
    opts.push_back(g);
  }
  std::vector<GenOutput> solo;
  for (size_t i = 0; i < prompts.size(); ++i) solo.push_back(e->generate(prompts[i], opts[i]));
  const int64_t before = e->batched_steps();
  std::vector<GenOutput> many(prompts.size());
  std::vector<int> calls(prompts.size(), 0);
  e->generate_many(prompts, opts, 6, [&](size_t i, GenOutput&& g) {
    ++calls[i];
    many[i] = std::move(g);
  });
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(calls[i], 1) << i;
    EXPECT_EQ(many[i].tokens, solo[i].tokens) << "request " << i;
    EXPECT_EQ(many[i].finish_reason, solo[i].finish_reason) << i;
  }
  EXPECT_GT(e->batched_steps(), before) << "no decode step served two requests: batching never happened";
  // a prompt the model cannot take is an error, not a crash
  std::vector<std::vector<int32_t>> bad = {prompts[0], {1, 2, int32_t(e->config().vocab_size) + 5}};
  EXPECT_THROW(e->generate_many(bad, {opts[0], opts[1]}, 2, [](size_t, GenOutput&&) {}), trex::Error);
}

// A decoder with a fixed number of sequence slots, as the GPU's is: the CPU decoder underneath, every open and
// close counted, at most `slots` open at once (open answers -1 beyond).
class SlotLimitedDecoder : public SequenceDecoder {
 public:
  SlotLimitedDecoder(trex::model::Model& m, int64_t slots) : inner_(m), slots_(slots) {}
  std::string device() const override { return "test"; }
  int64_t max_sequences() const override { return slots_; }
  int64_t open(int64_t expected) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (open_ == slots_) {
      ++refused;
      return -1;
    }
    ++open_;
    peak = std::max(peak, open_);
    ++opened;
    return inner_.open(expected);
  }
  void close(int64_t id) override {
    std::lock_guard<std::mutex> lock(mu_);
    inner_.close(id);
    --open_;
  }
  std::span<const float> step(std::span<const int64_t> ids, std::span<const std::span<const int32_t>> t) override {
    return inner_.step(ids, t);
  }
  std::span<const float> step_all_positions(int64_t id, std::span<const int32_t> t) override {
    ++scored;
    return inner_.step_all_positions(id, t);
  }
  bool scores_prompts() const override { return scores; }
  std::mutex mu_;
  int64_t open_ = 0, peak = 0, opened = 0, refused = 0, scored = 0;
  bool scores = false;

 private:
  CpuSequenceDecoder inner_;
  int64_t slots_;
};

TEST(Engine, GenerationsWaitForADecoderSlotAndGiveTheSameOutput) {
  auto e = Engine::load(micro_checkpoint(), {}, 256);
  std::vector<std::vector<int32_t>> prompts;
  std::vector<GenOptions> opts;
  for (int i = 0; i < 7; ++i) {
    prompts.push_back(e->chat_prompt({{"user", "Plan " + std::to_string(i) + " shifts.", ""}}));
    GenOptions g;
    g.max_tokens = 6 + i;
    g.sampling = {0.8, 0.9, 0, uint64_t(i + 1)};
    opts.push_back(g);
  }
  std::vector<GenOutput> solo;
  for (size_t i = 0; i < prompts.size(); ++i) solo.push_back(e->generate(prompts[i], opts[i]));
  auto limited = std::make_unique<SlotLimitedDecoder>(e->model(), 2);
  SlotLimitedDecoder* d = limited.get();
  e->set_decoder(std::move(limited));
  EXPECT_EQ(e->decoder().device(), "test");
  std::vector<GenOutput> many(prompts.size());
  e->generate_many(prompts, opts, 5, [&](size_t i, GenOutput&& g) { many[i] = std::move(g); });
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(many[i].tokens, solo[i].tokens) << "request " << i;
  EXPECT_EQ(d->opened, 7);
  EXPECT_EQ(d->open_, 0) << "every sequence is closed when its generation ends";
  EXPECT_LE(d->peak, 2);
  // an error inside a generation still releases its sequence
  std::vector<std::vector<int32_t>> bad = {{1, 2, int32_t(e->config().vocab_size) + 5}};
  EXPECT_THROW(e->generate_many(bad, {opts[0]}, 1, [](size_t, GenOutput&&) {}), trex::Error);
  EXPECT_EQ(d->open_, 0);
}

// A decoder that scores prompts (the GPU's does) gets --echo's scoring as one all-positions step of a sequence of
// its own, with the full forward's log-probabilities (the incremental decoder agrees with it to 2e-5 of the logit
// scale), and the generation after it is unchanged.
TEST(Engine, EchoScoresThePromptOnADecoderThatScoresPrompts) {
  auto e = Engine::load(micro_checkpoint(), {}, 256);
  const std::vector<int32_t> prompt = e->chat_prompt({{"user", "Minimise 2x + 3y subject to x + y >= 4.", ""}});
  GenOptions g;
  g.sampling.temperature = 0;
  g.max_tokens = 5;
  g.logprobs = 2;
  g.echo = true;
  const GenOutput ref = e->generate(prompt, g);
  auto scoring = std::make_unique<SlotLimitedDecoder>(e->model(), 1);
  scoring->scores = true;
  SlotLimitedDecoder* d = scoring.get();
  e->set_decoder(std::move(scoring));
  const GenOutput got = e->generate(prompt, g);
  EXPECT_EQ(d->scored, 1);
  EXPECT_EQ(d->opened, 2) << "one sequence for the scoring, one for the generation (a one-slot decoder: in turn)";
  EXPECT_EQ(d->open_, 0);
  EXPECT_EQ(got.tokens, ref.tokens);
  ASSERT_EQ(got.prompt_logprobs.size(), prompt.size() - 1);
  ASSERT_EQ(ref.prompt_logprobs.size(), prompt.size() - 1);
  for (size_t i = 0; i < ref.prompt_logprobs.size(); ++i) {
    EXPECT_EQ(got.prompt_logprobs[i].id, ref.prompt_logprobs[i].id);
    EXPECT_NEAR(got.prompt_logprobs[i].logprob, ref.prompt_logprobs[i].logprob, 1e-4) << "prompt token " << i + 1;
  }
}

TEST(Engine, SanitizeUtf8) {
  EXPECT_EQ(sanitize_utf8("ab\xC3\xA9"), "ab\xC3\xA9");
  EXPECT_EQ(sanitize_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(sanitize_utf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
}

TEST(GenerateCli, JsonlBatchMatchesEngineAndBadInputFails) {
  fs::path ck = micro_checkpoint();
  fs::path in = ck / "gen_in.jsonl", out = ck / "gen_out.jsonl";
  std::ofstream(in) << R"({"id":"a","messages":[{"role":"user","content":"Maximise profit."}]})" << "\n"
                    << R"({"id":"b","prompt":"x + y <= 4","max_tokens":3})" << "\n";
  auto r = run_trex({"generate", "--ckpt", ck.string(), "--input", in.string(), "--output", out.string(),
                     "--temperature", "0", "--max-tokens", "6", "--max-context", "256"});
  ASSERT_EQ(r.status, 0);
  auto e = Engine::load(ck, {}, 256);
  GenOptions g;
  g.sampling.temperature = 0;
  g.max_tokens = 6;
  GenOutput ea = e->generate_chat({{"user", "Maximise profit.", ""}}, g);
  g.max_tokens = 3;
  GenOutput eb = e->generate_text("x + y <= 4", g);
  trex::JsonlReader rd(out);
  auto ra = rd.next(), rb = rd.next();
  ASSERT_TRUE(ra && rb);
  EXPECT_FALSE(rd.next());
  EXPECT_EQ((*ra)["id"], "a");
  EXPECT_EQ((*ra)["text"], sanitize_utf8(ea.text));
  EXPECT_EQ((*ra)["completion_tokens"], ea.tokens.size());
  EXPECT_EQ((*rb)["text"], sanitize_utf8(eb.text));
  EXPECT_LE((*rb)["completion_tokens"].get<int>(), 3);
  // bad input: error exit, output not written
  fs::path bad = ck / "gen_bad.jsonl", bad_out = ck / "gen_bad_out.jsonl";
  std::ofstream(bad) << R"({"prompt":"ok"})" << "\n" << R"({"nope":1})" << "\n";
  auto rbad = run_trex({"generate", "--ckpt", ck.string(), "--input", bad.string(), "--output", bad_out.string()});
  EXPECT_EQ(rbad.status, 2);
  EXPECT_FALSE(fs::exists(bad_out));
  EXPECT_EQ(run_trex({"generate", "--ckpt", (ck / "missing").string(), "--prompt", "x"}).status, 2);
}

namespace {
// log-softmax of logits[id] in long double: an independent evaluation for the checks below
double reference_logprob(const std::vector<float>& logits, size_t usable, int32_t id) {
  long double mx = logits[0], sum = 0;
  for (size_t i = 0; i < usable; ++i) mx = std::max<long double>(mx, logits[i]);
  for (size_t i = 0; i < usable; ++i) sum += std::exp((long double)logits[i] - mx);
  return double((long double)logits[size_t(id)] - mx - std::log(sum));
}
}  // namespace

// --logprobs: each generated token's log-probability (from the incremental decoder) equals the full forward's
// log-softmax at that position; the top K are the K largest, in order, and greedy picks the first; --echo scores
// every prompt token after the first.
TEST(Engine, LogprobsMatchTheFullForwardAndEchoScoresThePrompt) {
  auto e = Engine::load(micro_checkpoint(), {}, 256);
  const size_t usable = std::min<size_t>(size_t(e->config().vocab_size), e->tokenizer().vocab_size());
  GenOptions g;
  g.sampling.temperature = 0;
  g.max_tokens = 8;
  g.logprobs = 5;
  g.echo = true;
  std::vector<int32_t> prompt = e->chat_prompt({{"user", "Minimise cost subject to x + y >= 3.", ""}});
  GenOutput out = e->generate(prompt, g);
  ASSERT_EQ(out.logprobs.size(), out.tokens.size());
  ASSERT_FALSE(out.tokens.empty());
  std::vector<int32_t> ctx = prompt;
  for (size_t i = 0; i < out.tokens.size(); ++i) {
    const TokenLogprob& t = out.logprobs[i];
    EXPECT_EQ(t.id, out.tokens[i]);
    const double want = reference_logprob(e->next_logits(ctx), usable, t.id);
    EXPECT_NEAR(t.logprob, want, 1e-4 * (1 + std::fabs(want))) << "token " << i;
    ASSERT_EQ(t.top.size(), 5u);
    EXPECT_EQ(t.top[0].first, t.id) << "greedy takes the most likely id";
    EXPECT_DOUBLE_EQ(t.top[0].second, t.logprob);
    double mass = 0;
    for (size_t k = 0; k < t.top.size(); ++k) {
      if (k) {
        EXPECT_GE(t.top[k - 1].second, t.top[k].second);
      }
      mass += std::exp(t.top[k].second);
    }
    EXPECT_LE(mass, 1.0 + 1e-9);
    ctx.push_back(t.id);
  }
  ASSERT_EQ(out.prompt_logprobs.size(), prompt.size() - 1);
  const auto all = e->all_logits(prompt);
  const size_t V = size_t(e->config().vocab_size);
  for (size_t t = 1; t < prompt.size(); ++t) {
    std::vector<float> row(all.begin() + ptrdiff_t((t - 1) * V), all.begin() + ptrdiff_t(t * V));
    EXPECT_EQ(out.prompt_logprobs[t - 1].id, prompt[t]);
    EXPECT_NEAR(out.prompt_logprobs[t - 1].logprob, reference_logprob(row, usable, prompt[t]), 1e-9);
  }
  GenOptions off = g;
  off.logprobs = -1;
  GenOutput plain = e->generate(prompt, off);
  EXPECT_EQ(plain.tokens, out.tokens) << "scoring changes nothing that is generated";
  EXPECT_TRUE(plain.logprobs.empty());
  EXPECT_TRUE(plain.prompt_logprobs.empty());
}

TEST(GenerateCli, LogprobsAndEchoInTheJsonOutput) {
  fs::path ck = micro_checkpoint();
  auto r = run_trex({"generate", "--ckpt", ck.string(), "--prompt", "x + y <= 4", "--temperature", "0", "--max-tokens",
                     "4", "--max-context", "256", "--logprobs", "3", "--echo"});
  ASSERT_EQ(r.status, 0) << r.out;
  const trex::Json j = trex::Json::parse(r.out.substr(r.out.find('{')));
  ASSERT_EQ(j["logprobs"].size(), j["completion_tokens"].get<size_t>());
  for (const auto& t : j["logprobs"]) {
    EXPECT_TRUE(t["token"].is_string());
    EXPECT_LE(t["logprob"].get<double>(), 0.0);
    ASSERT_EQ(t["top_logprobs"].size(), 3u);
    EXPECT_EQ(t["top_logprobs"][0]["id"], t["id"]);
  }
  auto e = Engine::load(ck, {}, 256);
  EXPECT_EQ(j["prompt_logprobs"].size(), e->tokenizer().encode("x + y <= 4").size() - 1);
  EXPECT_EQ(run_trex({"generate", "--ckpt", ck.string(), "--prompt", "x", "--echo"}).status, 2)
      << "--echo without --logprobs is refused";
}
