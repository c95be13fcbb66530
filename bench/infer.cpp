// Inference throughput of a random-init preset: prefill (one forward over a P-token prompt) and greedy decode
// (D new tokens; each one runs the full-sequence forward over the whole context, the engine's decoding path —
// trex has no incremental KV-cache decoding yet). Prints one JSON line.
// Usage: bench_infer [--preset tiny] [--prompt 128] [--decode 32]
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "infer/sampler.hpp"
#include "model/model.hpp"
#include "util/rng.hpp"

using namespace trex::model;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  std::string preset = "tiny";
  int64_t P = 128, D = 32;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--preset") preset = argv[i + 1];
    else if (a == "--prompt") P = std::stoll(argv[i + 1]);
    else if (a == "--decode") D = std::stoll(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  auto cfg = ModelConfig::preset(preset);
  Model m(cfg);
  m.init(1);
  trex::Rng rng(3);
  std::vector<int32_t> toks(static_cast<size_t>(P));
  for (auto& t : toks) t = int32_t(rng.uniform_int(2, cfg.vocab_size - 1));
  auto fwd = [&](const std::vector<int32_t>& ctx) {
    Batch b;
    b.B = 1;
    b.T = int64_t(ctx.size());
    b.tokens = ctx.data();
    auto l = m.forward(b);
    return trex::infer::argmax(l.subspan(l.size() - size_t(cfg.vocab_size)));
  };
  fwd(toks);  // warm-up (arena sizing)
  auto t0 = Clock::now();
  int32_t next = fwd(toks);
  double prefill_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<int32_t> ctx = toks;
  auto t1 = Clock::now();
  for (int64_t i = 0; i < D; ++i) {
    ctx.push_back(next);
    next = fwd(ctx);
  }
  double decode_s = std::chrono::duration<double>(Clock::now() - t1).count();
  std::printf("{\"preset\":\"%s\",\"prompt\":%lld,\"decode\":%lld,\"prefill_tok_per_s\":%.1f,\"decode_tok_per_s\":%.2f}\n",
              preset.c_str(), (long long)P, (long long)D, double(P) / prefill_s, double(D) / decode_s);
  return 0;
}
