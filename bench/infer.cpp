// Inference throughput of a random-init preset with incremental decoding (model::Decoder): prefill of a
// P-token prompt, greedy decode of D tokens for one sequence, and batched decode of B sequences stepped together.
// The peer is the reference path the decoder replaces: a full-sequence forward (Model::forward) per new token.
// Prints one JSON line.
// Usage: bench_infer [--preset tiny] [--prompt 128] [--decode 64] [--batch 8] [--reference-decode 8]
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "infer/sampler.hpp"
#include "model/decode.hpp"
#include "model/model.hpp"
#include "util/rng.hpp"

using namespace trex::model;
using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int main(int argc, char** argv) {
  std::string preset = "tiny";
  int64_t P = 128, D = 64, B = 8, Dref = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--preset") preset = argv[i + 1];
    else if (a == "--prompt") P = std::stoll(argv[i + 1]);
    else if (a == "--decode") D = std::stoll(argv[i + 1]);
    else if (a == "--batch") B = std::stoll(argv[i + 1]);
    else if (a == "--reference-decode") Dref = std::stoll(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  auto cfg = ModelConfig::preset(preset);
  Model m(cfg);
  m.init(1);
  const size_t V = size_t(cfg.vocab_size);
  trex::Rng rng(3);
  std::vector<int32_t> toks(static_cast<size_t>(P));
  for (auto& t : toks) t = int32_t(rng.uniform_int(2, cfg.vocab_size - 1));
  Decoder dec(m);
  {  // warm-up: sizes the arena for the prompt and for one-token steps
    DecodeState w = dec.new_state(P + D);
    int32_t next = trex::infer::argmax(dec.step(w, toks));
    for (int i = 0; i < 4; ++i) next = trex::infer::argmax(dec.step(w, std::span<const int32_t>(&next, 1)));
  }
  DecodeState st = dec.new_state(P + D);
  auto t0 = Clock::now();
  int32_t next = trex::infer::argmax(dec.step(st, toks));
  const double prefill_s = seconds_since(t0);
  std::vector<int32_t> generated;
  auto t1 = Clock::now();
  for (int64_t i = 0; i < D; ++i) {
    generated.push_back(next);
    next = trex::infer::argmax(dec.step(st, std::span<const int32_t>(&next, 1)));
  }
  const double decode_s = seconds_since(t1);
  // B sequences (the same prompt with a different last token) decoded together, one token each per step.
  std::vector<DecodeState> bs;
  std::vector<DecodeState*> bp;
  std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(B), toks);
  std::vector<std::span<const int32_t>> spans;
  for (int64_t b = 0; b < B; ++b) {
    prompts[size_t(b)].back() = int32_t((toks.back() + b) % cfg.vocab_size);
    bs.push_back(dec.new_state(P + D));
  }
  for (auto& s : bs) bp.push_back(&s);
  for (auto& p : prompts) spans.emplace_back(p);
  auto lg = dec.step(bp, spans);
  std::vector<int32_t> cur(static_cast<size_t>(B));
  auto t2 = Clock::now();
  for (int64_t i = 0; i < D; ++i) {
    for (int64_t b = 0; b < B; ++b) cur[size_t(b)] = trex::infer::argmax(lg.subspan(size_t(b) * V, V));
    spans.clear();
    for (int64_t b = 0; b < B; ++b) spans.emplace_back(&cur[size_t(b)], 1);
    lg = dec.step(bp, spans);
  }
  const double batch_s = seconds_since(t2);
  // Peer: the full-sequence forward per generated token (the same greedy continuation).
  std::vector<int32_t> ctx = toks;
  bool same = true;
  auto fwd = [&](const std::vector<int32_t>& c) {
    Batch b;
    b.B = 1;
    b.T = int64_t(c.size());
    b.tokens = c.data();
    auto l = m.forward(b);
    return trex::infer::argmax(l.subspan(l.size() - V));
  };
  fwd(ctx);  // warm-up
  const int64_t nref = std::min(Dref, D);
  auto t3 = Clock::now();
  for (int64_t i = 0; i < nref; ++i) {
    const int32_t id = fwd(ctx);
    same = same && id == generated[size_t(i)];
    ctx.push_back(id);
  }
  const double ref_s = seconds_since(t3);
  std::printf(
      "{\"preset\":\"%s\",\"prompt\":%lld,\"decode\":%lld,\"batch\":%lld,\"prefill_tok_per_s\":%.1f,"
      "\"decode_tok_per_s\":%.2f,\"batch_decode_tok_per_s\":%.2f,\"reference_decode_tok_per_s\":%.3f,"
      "\"reference_tokens\":%lld,\"same_greedy_tokens\":%s}\n",
      preset.c_str(), (long long)P, (long long)D, (long long)B, double(P) / prefill_s, double(D) / decode_s,
      double(B * D) / batch_s, double(nref) / ref_s, (long long)nref, same ? "true" : "false");
  return same ? 0 : 1;
}
