// trex_cuda_op_perf: the op-check harness in perf mode (issue #24 point 5). Every op at the model's sizes: checked
// against the CPU reference (sampled rows for the large GEMMs) and timed with events (1 warm-up + --iters calls),
// printed as one line per op with its time and achieved GB/s / TFLOP/s, and written as JSON lines to --out.
// Exit status: 0 every check passed, 1 a check failed, 3 no usable CUDA device (the reason is printed).
// scripts/gpu-check.sh runs it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/device.hpp"
#include "attention_cases.hpp"
#include "compressor_cases.hpp"
#include "experts_cases.hpp"
#include "hc_cases.hpp"
#include "indexer_cases.hpp"
#include "moe_route_cases.hpp"
#include "op_cases.hpp"
#include "optimizer_cases.hpp"

using namespace trex::cuda;
using namespace trex::cuda::check;

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // into a log file: what was printed survives a crash or a kill
  std::string out;
  int iters = 20;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick")) quick = true;  // smaller shapes (a first look, seconds)
    else {
      std::fprintf(stderr, "usage: trex_cuda_op_perf [--out FILE.jsonl] [--iters N] [--quick]\n");
      return 2;
    }
  }
  if (!available()) {
    std::printf("SKIPPED: %s\n", availability().reason.c_str());
    return 3;
  }
  std::printf("device: %s\n", availability().name.c_str());
  std::FILE* f = out.empty() ? nullptr : std::fopen(out.c_str(), "w");
  if (!out.empty() && !f) {
    std::fprintf(stderr, "error: cannot write %s\n", out.c_str());
    return 1;
  }
  // Each op printed and written as it finishes, and an op that throws is reported while the rest still run: one
  // failure on a first GPU run must not lose every other figure.
  int failed = 0;
  const auto emit = [&](const OpReport& r) {
    failed += r.ok() ? 0 : 1;
    std::printf("%s\n", r.str().c_str());
    if (!f) return;
    const double s = r.ms * 1e-3;
    std::fprintf(f,
                 "{\"op\": \"%s\", \"shape\": \"%s\", \"ok\": %s, \"ms\": %.6f, \"gb_per_s\": %.3f, "
                 "\"tflop_per_s\": %.3f}\n",
                 r.op.c_str(), r.shape.c_str(), r.ok() ? "true" : "false", r.ms, s > 0 ? r.bytes / s / 1e9 : 0.0,
                 s > 0 && r.flops > 0 ? r.flops / s / 1e12 : 0.0);
    std::fflush(f);
  };
  const auto run = [&](auto&& make) {
    try {
      auto got = make();
      if constexpr (std::is_same_v<std::decay_t<decltype(got)>, OpReport>)
        emit(got);
      else
        for (const OpReport& r : got) emit(r);
    } catch (const std::exception& e) {  // trex::Error (CUDA / cuBLASLt failures name file:line) or bad_alloc
      ++failed;
      std::printf("FAILED (threw): %s\n", e.what());
    }
  };
  try {
    Harness h(/*perf=*/true, iters, size_t(1) << 30);
    Blas blas;
    const int64_t big = quick ? 2048 : 8192, tok = quick ? 2048 : 8192;
    // dense products: square (the ceiling) and the three products of a linear at hidden 4096 -> 4096
    run([&] { return check_gemm(h, blas, GemmType::bf16, false, true, big, big, big, 0.0f, 8); });
    run([&] { return check_gemm(h, blas, GemmType::bf16, false, true, tok, 4096, 4096, 0.0f, 8); });
    run([&] { return check_gemm(h, blas, GemmType::bf16, false, false, tok, 4096, 4096, 0.0f, 8); });
    run([&] { return check_gemm(h, blas, GemmType::bf16, true, false, 4096, 4096, tok, 1.0f, 8); });
    run([&] { return check_gemm(h, blas, GemmType::fp32, false, true, big / 2, big / 2, big / 2, 0.0f, 8); });
    run([&] { return check_bf16_round(h, tok * 4096); });
    run([&] { return check_rmsnorm(h, tok, 4096, true); });
    run([&] { return check_rope(h, tok, 64, 512, 64); });
    run([&] { return check_swiglu(h, tok * 2048, 10.0f); });
    run([&] { return check_xent(h, quick ? 256 : 2048, 129280, 1.0f / 2048); });
    run([&] { return check_sinkhorn(h, tok, 4, 20); });  // mHC: one 4 x 4 matrix per token, 20 iterations
    // mHC around its GEMMs and Sinkhorn, 4 streams of 4096 per token: hc_pre (rho + the bf16 copy, gates and y; the
    // backward's gates, draw / coef / the gate-parameter sums, dX += coef X), hc_post forward + backward, the head
    run([&] { return check_hc_perf(h, tok); });
    // the indexer: top-512 of a sequence's compressed entries
    run([&] { return check_topk(h, tok, tok / 4, 512, 0); });
    // MoE: the router (Flash's 256 experts, k 6; a bias layer and a hash layer), the gather into expert order and
    // the combine at hidden 4096, the router backward with the balance term
    run([&] { return check_moe_route(h, 2, tok / 2, 256, 6, false, false); });
    run([&] { return check_moe_route(h, 2, tok / 2, 256, 6, true, false); });
    run([&] { return check_moe_dispatch(h, tok, 256, 6, 4096); });
    run([&] { return check_moe_route_backward(h, 2, tok / 2, 256, 6, false); });
    // routed experts, forward + backward: tok x 6 rows over 64 experts (uneven, one empty), d 4096, f 2048; the CPU
    // side on 4 of the experts (about 20 GB of device memory at full size)
    const std::vector<int64_t> ec = uneven_counts(64, tok * 6, 1, 5);
    run([&] { return check_experts(h, blas, GemmType::bf16, 64, 4096, 2048, ec, 10.0f, 4); });
    run([&] { return check_experts(h, blas, GemmType::fp32, 64, 4096, 2048, ec, 10.0f, 4); });
    // attention core, forward + backward: 64 heads of 512, window 128; CSA (512 of the compressed entries), HCA, SWA;
    // the reference on the first 256 queries (dkv, dC, dsink then only checked for bitwise reruns)
    const int64_t an = quick ? 1024 : 4096;
    run([&] { return check_sparse_attention(h, an, 64, 512, 128, AttnLists::subsets, 4, 512, {0}, 256); });
    run([&] { return check_sparse_attention(h, an, 64, 512, 128, AttnLists::all_visible, 128, 0, {0}, 256); });
    run([&] { return check_sparse_attention(h, an, 64, 512, 128, AttnLists::none, 0, 0, {0}, 256); });
    // compressor pooling (ape add + forward + backward + ape gradient): 8,192 tokens in three documents, CSA m 4
    // (overlapping, cdim 512) and HCA m 128 (cdim 512)
    run([&] { return check_compressor_pool_perf(h, quick); });
    // lightning indexer: scores, top-512 (topk_rows) and the KL forward + backward at HI 64 of 128, H 64 of 512, one
    // document of tok tokens (ratio 4: up to tok / 4 entries); the reference on the first 256 queries (dK then only
    // checked for bitwise reruns)
    run([&] { return check_indexer(h, {tok}, 64, 128, 64, 512, 512, false, IndexerInputs::random, 256); });
    // optimizers: AdamW over a 4096 x 4096 matrix and its norm (bf16 copy written); Newton–Schulz and a Muon step
    // of a 1024 x 4096 matrix (the CPU oracle's dgemm twin takes about a second there)
    run([&] { return check_adamw(h, quick ? 1024 : 4096, 4096, 1, true); });
    const int64_t ns_r = quick ? 256 : 1024, ns_c = quick ? 1024 : 4096;
    run([&] { return check_newton_schulz(h, blas, GemmType::fp32, ns_r, ns_c); });
    run([&] { return check_newton_schulz(h, blas, GemmType::bf16, ns_r, ns_c); });
    run([&] { return check_muon(h, blas, ns_r, ns_c, 1); });
  } catch (const std::exception& e) {  // the harness or the cuBLASLt handle could not be made
    std::printf("FAILED: %s\n", e.what());
    ++failed;
  }
  if (f) std::fclose(f);
  if (failed == 0)
    std::printf("all op checks passed\n");
  else
    std::printf("SOME OP CHECKS FAILED (%d)\n", failed);
  return failed == 0 ? 0 : 1;
}
