// trex_cuda_model_perf: the GPU model's whole-step checks and its benchmark (issue #24 points 6 and 9), the
// driver scripts/gpu-check.sh runs.
//   --parity  the tiny preset against the CPU model (model_parity.hpp): one step fp32 (no bf16: model_test.cpp says
//             why), 8 AdamW steps fp32 with a resume across devices at step 4, and the trainer's device
//             step (6 Muon steps of 2 micro-batches, clipped) against the CPU's, and the GPU decoder against the
//             CPU decoder (every position's logits of chunked prompts, ragged and batched steps, a reused slot),
//             and expert parallelism over 2 ranks as threads and two pipeline stages against the one-process GPU
//             model
//   --bench   the ~1B V4-style MoE preset below in bf16 on one GPU: forward + backward + AdamW per step, tokens/s,
//             model TFLOP/s by the CPU report's formula (model_info.hpp flops_per_token: train = 3 x forward,
//             forward = 2 N_mm + attention + indexer, MTP included) and MFU against 989 TFLOP/s (H100/H200 dense
//             bf16) and against 790 (the measured GEMM peak, MACHINE.md §9); then the GPU decoder on the same
//             preset: 8 sequences prefilled with min(S, 2048)-token prompts, 32 batched decoding steps (tokens/s)
// --out FILE appends JSON lines. Exit: 0 every check passed, 1 a check failed, 3 no usable CUDA device.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "cuda/device.hpp"
#include "cuda/gpu_decode.hpp"
#include "cuda/device_optimizer.hpp"
#include "cuda/gpu_model.hpp"
#include "cuda/stream.hpp"
#include "model/model_info.hpp"
#include "model_parity.hpp"
#include "train/train_step.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

using namespace trex;
using namespace trex::cuda;
using namespace trex::cuda::check;

namespace {

struct Out {
  std::string path;
  void line(const std::string& json) const {
    if (path.empty()) return;
    std::ofstream f(path, std::ios::app);
    f << json << "\n";
  }
};

bool run_parity(const Out& out) {
  bool ok = true;
  const model::ModelConfig tiny = model::ModelConfig::preset("tiny");
  auto step = [&](GemmType t, const char* name) {
    const StepParity r = compare_step(tiny, t, 7, 2, 64);
    std::printf("%s %s\n", name, r.str().c_str());
    out.line(std::string("{\"check\":\"model_step\",\"matmul\":\"") + name + "\",\"ok\":" + (r.ok() ? "true" : "false") +
             ",\"worst_loss_rel\":" + std::to_string(r.worst_loss_rel) + ",\"worst_grad_rel\":" +
             std::to_string(r.worst_grad_rel) + "}");
    ok = ok && r.ok();
  };
  step(GemmType::fp32, "fp32");  // no bf16 step parity: model_test.cpp says why
  const CurveParity c = compare_training(tiny, GemmType::fp32, train::OptimizerKind::AdamW, 8, 3e-3, 5, 2, 64);
  std::printf("fp32 adamw 8 steps %s\n", c.str().c_str());
  std::string js = "{\"check\":\"model_curve\",\"ok\":" + std::string(c.ok() ? "true" : "false") + ",\"cpu\":[";
  for (size_t i = 0; i < c.cpu.size(); ++i) js += (i ? "," : "") + std::to_string(c.cpu[i]);
  js += "],\"gpu\":[";
  for (size_t i = 0; i < c.gpu.size(); ++i) js += (i ? "," : "") + std::to_string(c.gpu[i]);
  js += "],\"worst_rel\":" + std::to_string(c.worst_rel) + ",\"worst_resume_rel\":" + std::to_string(c.worst_resume_rel) + "}";
  out.line(js);
  const TrainStepParity t =
      compare_train_steps(tiny, GemmType::fp32, train::OptimizerKind::Muon, 6, 2, 0.05, 1e-3, 22, 2, 64);
  std::printf("trainer step fp32 muon %s\n", t.str().c_str());
  out.line(std::string("{\"check\":\"train_step\",\"ok\":") + (t.ok() ? "true" : "false") +
           ",\"worst_loss_rel\":" + std::to_string(t.worst_loss_rel) + ",\"worst_norm_rel\":" +
           std::to_string(t.worst_norm_rel) + ",\"worst_resume_rel\":" + std::to_string(t.worst_resume_rel) + "}");
  const DecodeParity dp = compare_decode(tiny, GemmType::fp32, 31);
  std::printf("decoder fp32 %s\n", dp.str().c_str());
  out.line(std::string("{\"check\":\"decode\",\"ok\":") + (dp.ok() ? "true" : "false") + ",\"positions\":" +
           std::to_string(dp.positions) + ",\"worst_rel\":" + std::to_string(dp.worst_rel) + "}");
  const ExpertParallelParity ep = compare_expert_parallel(tiny, GemmType::fp32, 2, 47, 64);
  std::printf("expert parallel fp32 %s\n", ep.str().c_str());
  out.line(std::string("{\"check\":\"expert_parallel\",\"ok\":") + (ep.ok() ? "true" : "false") + ",\"ranks\":" +
           std::to_string(ep.ranks) + ",\"worst_loss_rel\":" + std::to_string(ep.worst_loss_rel) +
           ",\"worst_grad_rel\":" + std::to_string(ep.worst_grad_rel) + "}");
  const PipelineParity pp = compare_pipeline_stages(tiny, GemmType::fp32, 47, 64);
  std::printf("pipeline stages fp32 %s\n", pp.str().c_str());
  out.line(std::string("{\"check\":\"pipeline_stages\",\"ok\":") + (pp.ok() ? "true" : "false") +
           ",\"worst_loss_rel\":" + std::to_string(pp.worst_loss_rel) + ",\"worst_grad_rel\":" +
           std::to_string(pp.worst_grad_rel) + "}");
  return ok && c.ok() && t.ok() && dp.ok() && ep.ok() && pp.ok();
}

// The 1B preset's initial weights (the CPU model's initialisation, seed 1): made once, about 25 s on one core for
// 1.04 B values, and copied into each bench model.
struct BenchWeights {
  std::vector<float> params;
  std::vector<int64_t> ints;
};
BenchWeights bench_weights(Model& m) {
  model::init_params(m.host(), m.config(), 1);
  return {{m.host().params().begin(), m.host().params().end()},
          {m.host().int_params().begin(), m.host().int_params().end()}};
}
void put_weights(Model& m, const BenchWeights& w) {
  if (w.params.size() != m.host().params().size() || w.ints.size() != m.host().int_params().size())
    throw trex::Error("bench weights of another layout");
  std::copy(w.params.begin(), w.params.end(), m.host().params().begin());
  std::copy(w.ints.begin(), w.ints.end(), m.host().int_params().begin());
}

bool run_bench(const Out& out, int64_t B, int64_t T, int steps, BenchWeights& weights) {
  const model::ModelConfig cfg = bench_1b_config();
  const model::ParamCounts pc = model::count_parameters(cfg);
  const model::FlopsPerToken fl = model::flops_per_token(cfg, T, true);
  std::printf("1B preset: %.3f B parameters (%.3f B with MTP), %.3f B active; %.2f GFLOP/token train at S = %lld\n",
              double(pc.total) / 1e9, double(pc.total_with_mtp) / 1e9, double(pc.active) / 1e9, fl.train / 1e9,
              (long long)T);
  ModelOptions mo;
  mo.matmul = GemmType::bf16;
  mo.later_bytes_per_param = kOptimizerBytesPerParam;  // the optimizer below
  Model gpu(cfg, mo);
  {
    weights = bench_weights(gpu);
    train::TensorRanges ranges;
    const auto slots = train::optimizer_slots(gpu.host().table(), false, ranges);
    gpu.upload();
    DeviceOptimizer opt(slots, gpu.numel(), train::OptimizerConfig{}, GemmType::bf16);
    Blas blas;
    Stream stream;
    Rng r(3);
    std::vector<int32_t> tok(size_t(B * T));
    using clock = std::chrono::steady_clock;
    double seconds = 0, loss = 0;
    const int warm = 2;
    for (int s = 0; s < warm + steps; ++s) {
      for (auto& t : tok) t = int32_t(r.uniform_int(0, cfg.vocab_size - 1));
      const model::Batch b{B, T, tok.data(), nullptr, nullptr};
      const auto t0 = clock::now();
      gpu.zero_grad();
      loss = gpu.forward_backward(b).total;
      opt.step(blas, gpu.device_params(), gpu.device_grads(), 1e-4, 1.0f, gpu.device_params_bf16(), stream);
      stream.synchronize();
      gpu.update_gate_bias();
      const auto t1 = clock::now();
      if (s >= warm) seconds += std::chrono::duration<double>(t1 - t0).count();
    }
    const double tps = double(B * T * steps) / seconds;
    const double tflops = tps * fl.train / 1e12;
    std::printf("1B bench bf16: %lld x %lld tokens per step, %d steps: %.0f tokens/s, %.1f TFLOP/s model, MFU %.2f %% of "
                "989, %.2f %% of 790; last loss %.4f; activations %.2f GiB high water of %.2f\n",
                (long long)B, (long long)T, steps, tps, tflops, 100 * tflops / 989.0, 100 * tflops / 790.0, loss,
                double(gpu.activation_high_water()) / double(1 << 30), double(gpu.activation_capacity()) / double(1 << 30));
    out.line("{\"check\":\"bench_1b\",\"tokens_per_s\":" + std::to_string(tps) + ",\"tflops\":" + std::to_string(tflops) +
             ",\"mfu_989\":" + std::to_string(tflops / 989.0) + ",\"mfu_790\":" + std::to_string(tflops / 790.0) +
             ",\"loss\":" + std::to_string(loss) + "}");
    return std::isfinite(loss);
  }
}

// The GPU decoder on the 1B preset (bf16 products, a model without gradients): S sequences each prefilled with a
// P-token prompt (one step per prompt), then G batched decoding steps of one token per sequence; prefill and
// decode tokens/s and the decode step's latency.
bool run_decode_bench(const Out& out, int64_t S, int64_t P, int64_t G, BenchWeights& weights) {
  const model::ModelConfig cfg = bench_1b_config();
  ModelOptions mo;
  mo.matmul = GemmType::bf16;
  mo.activation_bytes = size_t(256) << 20;
  mo.gradients = false;
  Model gpu(cfg, mo);
  if (weights.params.empty())
    weights = bench_weights(gpu);
  else
    put_weights(gpu, weights);
  gpu.upload();
  DecoderOptions o;
  o.sequences = S;
  o.tokens = P + G;
  o.rows = std::max(P, S);
  Decoder dec(gpu, o);
  Rng r(5);
  auto tokens = [&](int64_t n) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (auto& x : t) x = int32_t(r.uniform_int(0, cfg.vocab_size - 1));
    return t;
  };
  std::vector<int64_t> slots;
  for (int64_t i = 0; i < S; ++i) slots.push_back(dec.open());
  using clock = std::chrono::steady_clock;
  bool finite = true;
  auto check = [&](std::span<const float> lg) {
    for (float v : lg) finite = finite && std::isfinite(v);
  };
  const auto t0 = clock::now();
  for (int64_t i = 0; i < S; ++i) {
    const auto p = tokens(P);
    std::span<const int32_t> one[1] = {p};
    check(dec.step(std::span<const int64_t>(&slots[size_t(i)], 1), one));
  }
  const auto t1 = clock::now();
  for (int64_t g = 0; g < G; ++g) {
    std::vector<std::vector<int32_t>> next;
    for (int64_t i = 0; i < S; ++i) next.push_back(tokens(1));
    const std::vector<std::span<const int32_t>> spans(next.begin(), next.end());
    check(dec.step(slots, spans));
  }
  const auto t2 = clock::now();
  const double prefill_s = std::chrono::duration<double>(t1 - t0).count();
  const double decode_s = std::chrono::duration<double>(t2 - t1).count();
  const double prefill_tps = double(S * P) / prefill_s, decode_tps = double(S * G) / decode_s;
  std::printf("1B decoder bf16: %lld sequences, %lld-token prompts: prefill %.0f tokens/s; %lld batched steps: "
              "decode %.0f tokens/s, %.2f ms per step; caches %.2f GiB%s\n",
              (long long)S, (long long)P, prefill_tps, (long long)G, decode_tps, 1e3 * decode_s / double(G),
              double(dec.cache_bytes()) / double(1 << 30), finite ? "" : "; NON-FINITE LOGITS");
  out.line("{\"check\":\"decode_1b\",\"prefill_tokens_per_s\":" + std::to_string(prefill_tps) +
           ",\"decode_tokens_per_s\":" + std::to_string(decode_tps) + ",\"finite\":" + (finite ? "true" : "false") +
           "}");
  return finite;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // into a log file: what was printed survives a crash or a kill
  Out out;
  bool parity = false, bench = false;
  int64_t B = 2, T = 4096;
  int steps = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out.path = argv[++i];
    else if (!std::strcmp(argv[i], "--parity")) parity = true;
    else if (!std::strcmp(argv[i], "--bench")) bench = true;
    else if (!std::strcmp(argv[i], "--batch") && i + 1 < argc) B = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--seq") && i + 1 < argc) T = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) steps = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: trex_cuda_model_perf [--parity] [--bench [--batch B] [--seq T] [--steps N]] [--out F]\n");
      return 2;
    }
  }
  if (!parity && !bench) parity = bench = true;
  if (!available()) {
    std::printf("SKIPPED: %s\n", availability().reason.c_str());
    return 3;
  }
  std::printf("device: %s\n", availability().name.c_str());
  // each part on its own: one that throws is reported and the next still runs
  bool ok = true;
  const auto part = [&](const char* what, auto&& body) {
    try {
      ok = body() && ok;
    } catch (const std::exception& e) {
      std::printf("FAILED (%s): %s\n", what, e.what());
      ok = false;
    }
  };
  BenchWeights weights;  // the training bench's initial weights, reused by the decoder's
  if (parity) part("parity", [&] { return run_parity(out); });
  if (bench) part("1B bench", [&] { return run_bench(out, B, T, steps, weights); });
  if (bench)
    part("1B decoder bench", [&] { return run_decode_bench(out, 8, std::min<int64_t>(T, 2048), 32, weights); });
  return ok ? 0 : 1;
}
