// Forward + backward step of a model preset (default `bench`) on a fixed token batch. Writes the config and the
// tokens it used (for the PyTorch twin to time the same step) and prints one JSON line with the timings.
// Usage: bench_model_step [--preset bench] [--batch 8] [--seq 256] [--steps 5] [--warmup 1] [--out-dir DIR]
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "model/model.hpp"

using namespace trex::model;

int main(int argc, char** argv) {
  std::string preset = "bench", out_dir;
  int64_t B = 8, T = 256, steps = 5, warmup = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--preset") preset = argv[i + 1];
    else if (a == "--batch") B = std::stoll(argv[i + 1]);
    else if (a == "--seq") T = std::stoll(argv[i + 1]);
    else if (a == "--steps") steps = std::stoll(argv[i + 1]);
    else if (a == "--warmup") warmup = std::stoll(argv[i + 1]);
    else if (a == "--out-dir") out_dir = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  try {
    ModelConfig cfg = ModelConfig::preset(preset);
    Model model(cfg);
    model.init(1);
    std::vector<int32_t> tok(size_t(B * T));
    uint64_t s = 12345;
    for (auto& t : tok) {  // fixed LCG stream: same tokens every run
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      t = int32_t((s >> 33) % uint64_t(cfg.vocab_size));
    }
    if (!out_dir.empty()) {
      std::ofstream(out_dir + "/config.json") << cfg.to_hf_json().dump(2);
      std::ofstream f(out_dir + "/tokens.bin", std::ios::binary);
      f.write(reinterpret_cast<const char*>(tok.data()), std::streamsize(tok.size() * 4));
    }
    Batch batch{B, T, tok.data(), nullptr, nullptr};
    using clk = std::chrono::steady_clock;
    double first_ms = 0, loss0 = 0;
    for (int64_t i = 0; i < warmup; ++i) {
      auto t0 = clk::now();
      model.zero_grad();
      loss0 = model.forward_backward(batch).total;
      if (i == 0) first_ms = std::chrono::duration<double, std::milli>(clk::now() - t0).count();
    }
    // process CPU time too: on a shared machine wall time is noisy, CPU seconds per step much less so
    auto cpu_now = [] {
      timespec ts{};
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
    };
    const double cpu0 = cpu_now();
    double total_ms = 0, loss = 0;
    for (int64_t i = 0; i < steps; ++i) {
      auto t0 = clk::now();
      model.zero_grad();
      loss = model.forward_backward(batch).total;
      total_ms += std::chrono::duration<double, std::milli>(clk::now() - t0).count();
    }
    const double ms = total_ms / double(steps), cpu_ms = (cpu_now() - cpu0) / double(steps);
    std::printf(
        "{\"impl\":\"trex\",\"preset\":\"%s\",\"batch\":%ld,\"seq\":%ld,\"params\":%zu,\"first_step_ms\":%.1f,"
        "\"step_ms\":%.2f,\"cpu_ms\":%.1f,\"tok_per_s\":%.0f,\"loss_first\":%.5f,\"loss\":%.5f,\"arena_mb\":%.1f}\n",
        preset.c_str(), long(B), long(T), model.params().size(), first_ms, ms, cpu_ms, double(B * T) / (ms / 1000.0), loss0,
        loss, double(model.arena_bytes()) / 1048576.0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
