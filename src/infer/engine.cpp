// Engine: checkpoint loading and the token generation loop (see engine.hpp).
#include "infer/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include "model/checkpoint.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;

namespace trex::infer {

CheckpointPaths resolve_checkpoint(const fs::path& dir_in, const fs::path& tokenizer) {
  CheckpointPaths p;
  fs::path dir = dir_in;
  if (!fs::is_directory(dir)) throw Error("checkpoint: '" + dir.string() + "' is not a folder");
  fs::path root = dir;
  if (fs::is_regular_file(dir / "latest")) {
    std::string name = read_file(dir / "latest");
    while (!name.empty() && (name.back() == '\n' || name.back() == '\r' || name.back() == ' ')) name.pop_back();
    if (name.empty() || !fs::is_directory(dir / name))
      throw Error("checkpoint: " + (dir / "latest").string() + " names '" + name + "', which is not a folder");
    dir = dir / name;
  }
  p.dir = dir;
  p.config = dir / "config.json";
  if (!fs::is_regular_file(p.config)) throw Error("checkpoint: missing " + p.config.string());
  if (!tokenizer.empty()) {
    p.tokenizer = tokenizer;
  } else {
    for (const fs::path& cand : {dir / "tokenizer.json", root / "tokenizer.json", dir.parent_path() / "tokenizer.json"})
      if (fs::is_regular_file(cand)) {
        p.tokenizer = cand;
        break;
      }
  }
  if (p.tokenizer.empty() || !fs::is_regular_file(p.tokenizer))
    throw Error("checkpoint: no tokenizer.json in " + dir.string() + " or its parent (pass --tokenizer FILE)");
  return p;
}

Engine::Engine(model::ModelConfig cfg, text::Tokenizer tok)
    : cfg_(std::move(cfg)),
      tok_(std::move(tok)),
      chat_(tok_),
      model_(std::make_unique<model::Model>(cfg_)),
      decoder_(std::make_unique<CpuSequenceDecoder>(*model_)) {}

std::unique_ptr<Engine> Engine::load(const fs::path& ckpt, const fs::path& tokenizer, int max_context,
                                     const DecoderFactory& make_decoder) {
  CheckpointPaths p = resolve_checkpoint(ckpt, tokenizer);
  auto cfg = model::ModelConfig::from_hf_json(p.config);
  auto tok = text::Tokenizer::load(p.tokenizer);
  auto e = std::make_unique<Engine>(cfg, std::move(tok));
  model::load_weights(p.dir, e->model().store());
  e->set_max_context(max_context);
  if (make_decoder) e->set_decoder(make_decoder(e->model(), max_context));
  return e;
}

std::vector<float> Engine::all_logits(std::span<const int32_t> tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  model::Batch b;
  b.B = 1;
  b.T = int64_t(tokens.size());
  b.tokens = tokens.data();
  auto logits = model_->forward(b);
  return std::vector<float>(logits.begin(), logits.end());
}

std::vector<float> Engine::next_logits(std::span<const int32_t> tokens) {
  auto logits = all_logits(tokens);
  const int64_t V = cfg_.vocab_size;
  return std::vector<float>(logits.end() - V, logits.end());
}

TokenLogprob score_token(std::span<const float> logits, int32_t id, int k) {
  if (id < 0 || size_t(id) >= logits.size()) throw Error("logprobs: token id " + std::to_string(id) + " out of range");
  double mx = -std::numeric_limits<double>::infinity();
  for (float x : logits) mx = std::max(mx, double(x));
  double sum = 0;
  for (float x : logits) sum += std::exp(double(x) - mx);
  const double lse = mx + std::log(sum);
  TokenLogprob t{id, double(logits[size_t(id)]) - lse, {}};
  const size_t kk = std::min(size_t(std::max(k, 0)), logits.size());
  std::vector<int32_t> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int32_t(i);
  std::partial_sort(order.begin(), order.begin() + ptrdiff_t(kk), order.end(), [&](int32_t a, int32_t b) {
    return logits[size_t(a)] > logits[size_t(b)] || (logits[size_t(a)] == logits[size_t(b)] && a < b);
  });
  for (size_t i = 0; i < kk; ++i) t.top.push_back({order[i], double(logits[size_t(order[i])]) - lse});
  return t;
}

// ------------------------------------------------------------------ step combiner
struct Engine::StepRequest {
  int64_t sequence;
  std::span<const int32_t> tokens;
  bool all_positions = false;  // every new token's logits (prompt scoring), not only the last
  std::vector<float> logits;
  std::exception_ptr error;
  bool done = false;
};

std::vector<float> Engine::step(int64_t sequence, std::span<const int32_t> tokens, bool all_positions) {
  for (int32_t id : tokens)  // checked here so one bad request can never fail a shared step
    if (id < 0 || id >= int32_t(cfg_.vocab_size))
      throw Error("generate: token id " + std::to_string(id) + " outside the model's vocabulary of " +
                  std::to_string(cfg_.vocab_size));
  StepRequest req{sequence, tokens, all_positions, {}, nullptr, false};
  std::unique_lock<std::mutex> lock(step_mu_);
  step_queue_.push_back(&req);
  while (!req.done) {
    if (step_running_) {
      step_cv_.wait(lock);
      continue;
    }
    std::vector<StepRequest*> batch;
    batch.swap(step_queue_);
    step_running_ = true;
    lock.unlock();
    run_steps(batch);
    lock.lock();
    for (auto* r : batch) r->done = true;
    step_running_ = false;
    step_cv_.notify_all();
  }
  if (req.error) std::rethrow_exception(req.error);
  return std::move(req.logits);
}

// Prefills (several tokens) and prompt scorings run one at a time; single-token steps run together as one batch.
void Engine::run_steps(std::vector<StepRequest*>& batch) {
  const size_t V = size_t(cfg_.vocab_size);
  std::vector<int64_t> ids;
  std::vector<std::span<const int32_t>> toks;
  std::vector<StepRequest*> decode;
  for (auto* r : batch) {
    if (r->tokens.size() == 1 && !r->all_positions) {
      decode.push_back(r);
      continue;
    }
    try {
      std::span<const int32_t> t[1] = {r->tokens};
      auto lg = r->all_positions ? decoder_->step_all_positions(r->sequence, r->tokens)
                                 : decoder_->step(std::span<const int64_t>(&r->sequence, 1), t);
      r->logits.assign(lg.begin(), lg.end());
    } catch (...) {
      r->error = std::current_exception();
    }
  }
  if (decode.empty()) return;
  for (auto* r : decode) {
    ids.push_back(r->sequence);
    toks.push_back(r->tokens);
  }
  try {
    auto lg = decoder_->step(ids, toks);
    for (size_t i = 0; i < decode.size(); ++i) decode[i]->logits.assign(lg.begin() + i * V, lg.begin() + (i + 1) * V);
    if (decode.size() > 1) ++batched_steps_;
  } catch (...) {
    for (auto* r : decode) r->error = std::current_exception();
  }
}

int64_t Engine::open_sequence(int64_t expected_tokens) {
  std::unique_lock<std::mutex> lock(seq_mu_);
  int64_t id = -1;
  seq_cv_.wait(lock, [&] { return (id = decoder_->open(expected_tokens)) >= 0; });
  return id;
}

class Engine::SequenceLease {
 public:
  SequenceLease(Engine& e, int64_t expected_tokens) : e_(e), id_(e.open_sequence(expected_tokens)) {}
  ~SequenceLease() { e_.close_sequence(id_); }
  SequenceLease(const SequenceLease&) = delete;
  SequenceLease& operator=(const SequenceLease&) = delete;
  int64_t id() const { return id_; }

 private:
  Engine& e_;
  int64_t id_;
};

std::vector<float> Engine::prompt_logits(std::span<const int32_t> prompt) {
  if (!decoder_->scores_prompts()) return all_logits(prompt);
  const SequenceLease lease(*this, int64_t(prompt.size()));
  const int64_t sequence = lease.id();
  return step(sequence, prompt, true);
}

void Engine::close_sequence(int64_t id) noexcept {
  try {
    std::lock_guard<std::mutex> lock(seq_mu_);
    decoder_->close(id);
  } catch (...) {  // an id the decoder does not know: nothing to release
  }
  seq_cv_.notify_all();
}

namespace {
// Length of the longest prefix of s[0, n) that does not end inside a UTF-8 multi-byte character.
size_t utf8_safe_prefix(const std::string& s, size_t n) {
  size_t i = n;
  int back = 0;
  while (i > 0 && back < 4 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) {
    --i;
    ++back;
  }
  if (i == 0) return n;
  const unsigned char lead = static_cast<unsigned char>(s[i - 1]);
  size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return (size_t(back) + 1 < need) ? i - 1 : n;
}
}  // namespace

GenOutput Engine::generate(const std::vector<int32_t>& prompt, const GenOptions& opt, const DeltaCallback& on_delta) {
  if (prompt.empty()) throw Error("generate: empty prompt");
  if (int(prompt.size()) >= max_context_)
    throw Error("generate: prompt of " + std::to_string(prompt.size()) + " tokens does not fit the context of " +
                std::to_string(max_context_) + " tokens");
  GenOutput out;
  out.prompt_tokens = int(prompt.size());
  Sampler sampler(opt.sampling);
  std::vector<int32_t> ctx = prompt;
  // Only ids the tokenizer can decode are eligible (the model's vocabulary may be padded beyond it).
  const size_t usable = std::min<size_t>(size_t(cfg_.vocab_size), tok_.vocab_size());
  size_t max_stop = 0;
  for (const auto& s : opt.stop) max_stop = std::max(max_stop, s.size());
  size_t emitted = 0;
  bool client_gone = false;
  auto emit = [&](size_t upto) {
    if (upto > emitted && on_delta && !client_gone) {
      if (!on_delta(out.text.substr(emitted, upto - emitted))) client_gone = true;
    }
    emitted = std::max(emitted, upto);
  };
  out.finish_reason = "length";
  if (opt.echo && opt.logprobs >= 0) {  // the prompt's tokens scored (the decoder's or the full forward)
    const auto all = prompt_logits(prompt);
    const size_t V = size_t(cfg_.vocab_size);
    for (size_t t = 1; t < prompt.size(); ++t)
      out.prompt_logprobs.push_back(
          score_token(std::span<const float>(all.data() + (t - 1) * V, usable), prompt[t], opt.logprobs));
  }
  const SequenceLease lease(*this, std::min<int64_t>(max_context_, int64_t(prompt.size()) + opt.max_tokens));
  const int64_t sequence = lease.id();
  std::vector<float> logits = step(sequence, prompt);
  while (int(out.tokens.size()) < opt.max_tokens && !client_gone) {
    if (int(ctx.size()) >= max_context_) break;
    if (!out.tokens.empty()) logits = step(sequence, std::span<const int32_t>(&ctx.back(), 1));
    const int32_t id = sampler.sample(std::span<const float>(logits.data(), usable));
    if (id == int32_t(cfg_.eos_token_id)) {
      out.finish_reason = "stop";
      break;
    }
    ctx.push_back(id);
    out.tokens.push_back(id);
    if (opt.logprobs >= 0) out.logprobs.push_back(score_token(std::span<const float>(logits.data(), usable), id, opt.logprobs));
    const size_t before = out.text.size();
    tok_.decode_append(id, out.text);
    if (max_stop) {
      const size_t from = before >= max_stop ? before - max_stop + 1 : 0;
      size_t cut = std::string::npos;
      for (const auto& s : opt.stop) {
        size_t at = out.text.find(s, from);
        if (at != std::string::npos) cut = std::min(cut, at);
      }
      if (cut != std::string::npos) {
        out.text.resize(cut);
        out.finish_reason = "stop";
        break;
      }
    }
    const size_t hold = max_stop ? max_stop - 1 : 0;
    size_t safe = out.text.size() > hold ? out.text.size() - hold : 0;
    emit(utf8_safe_prefix(out.text, safe));
  }
  emit(out.text.size());
  return out;
}

void Engine::generate_many(const std::vector<std::vector<int32_t>>& prompts, const std::vector<GenOptions>& opts,
                           int concurrency, const std::function<void(size_t, GenOutput&&)>& on_done) {
  if (prompts.size() != opts.size()) throw Error("generate: prompts and options differ in number");
  std::atomic<size_t> next{0};
  std::mutex done_mu;
  std::exception_ptr first_error;
  auto worker = [&] {
    for (;;) {
      const size_t i = next.fetch_add(1);
      if (i >= prompts.size()) return;
      try {
        GenOutput g = generate(prompts[i], opts[i]);
        std::lock_guard<std::mutex> lock(done_mu);
        on_done(i, std::move(g));
      } catch (...) {
        std::lock_guard<std::mutex> lock(done_mu);
        if (!first_error) first_error = std::current_exception();
        next = prompts.size();  // stop handing out work
        return;
      }
    }
  };
  const size_t n = std::max<size_t>(1, std::min<size_t>(size_t(std::max(concurrency, 1)), prompts.size()));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

GenOutput Engine::generate_text(const std::string& prompt, const GenOptions& opt, const DeltaCallback& on_delta) {
  std::vector<int32_t> ids = tok_.encode(prompt);
  return generate(ids, opt, on_delta);
}

std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  while (i < s.size()) {
    const unsigned char c = byte(i);
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte (rejects overlong forms, surrogates)
    if (c < 0x80) len = 1;
    else if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      const unsigned char b = byte(i + k);
      ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}

std::vector<int32_t> Engine::chat_prompt(const std::vector<text::ChatMessage>& messages) const {
  return chat_.encode_prompt(messages, false);
}

GenOutput Engine::generate_chat(const std::vector<text::ChatMessage>& messages, const GenOptions& opt,
                                const DeltaCallback& on_delta) {
  return generate(chat_prompt(messages), opt, on_delta);
}

namespace {
std::vector<text::ChatMessage> chat_messages(const GenerationRequest& r) {
  std::vector<text::ChatMessage> msgs;
  for (const auto& m : r.messages) msgs.push_back({m.role, m.content, ""});
  return msgs;
}
}  // namespace

int EngineChatGenerator::prompt_tokens(const GenerationRequest& r) const {
  return int(engine_->chat_prompt(chat_messages(r)).size());
}

GenerationResult EngineChatGenerator::generate(const GenerationRequest& r, const DeltaCallback& on_delta) {
  GenOptions opt;
  opt.sampling.temperature = r.temperature;
  opt.sampling.top_p = r.top_p;
  opt.sampling.top_k = r.top_k;
  opt.sampling.seed = r.seed.value_or(0);
  opt.max_tokens = r.max_tokens;
  opt.stop = r.stop;
  opt.logprobs = r.logprobs ? r.top_logprobs : -1;
  // JSON needs valid UTF-8; a model can emit any bytes, so invalid sequences become U+FFFD.
  DeltaCallback clean;
  if (on_delta) clean = [&](const std::string& d) { return on_delta(sanitize_utf8(d)); };
  GenOutput g = engine_->generate_chat(chat_messages(r), opt, clean);
  GenerationResult res;
  res.text = sanitize_utf8(g.text);
  res.finish_reason = g.finish_reason;
  res.prompt_tokens = g.prompt_tokens;
  res.completion_tokens = int(g.tokens.size());
  auto score = [&](int32_t id, double lp) {
    TokenScore s;
    const std::string raw = engine_->tokenizer().decode(std::vector<int32_t>{id});
    s.token = sanitize_utf8(raw);
    s.bytes.assign(raw.begin(), raw.end());
    s.logprob = lp;
    return s;
  };
  for (const auto& t : g.logprobs) {
    TokenScore s = score(t.id, t.logprob);
    for (const auto& [id, lp] : t.top) s.top.push_back(score(id, lp));
    res.logprobs.push_back(std::move(s));
  }
  return res;
}

}  // namespace trex::infer
