// GFLOP/s of the GEMMs at the `bench` preset's training shapes (8 x 256 tokens, d 256, f 512, V 4096, routed
// experts ~512 rows each), single-threaded (rates from thread CPU time, best call), fp32 (OpenBLAS sgemm) vs the AVX512_BF16 kernel (gemm_bf16)
// and trex's fixed-order fp32 kernel (gemm_fixed_order: the routed experts' row-invariant products). Prints
// one line per shape plus the load average (the machine is shared). Usage: bench_gemm_shapes [REPEATS | peak]
// (peak: only the core's register-only FP32 FMA and BF16 dot rates, which the train bench prints beside its MFU)
// GCC 12's _mm512_reduce_add_ps uses an _mm512_undefined_ps() operand that -Wuninitialized flags (header false
// positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#include <omp.h>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "nn/gemm.hpp"
#include "nn/gemm_bf16.hpp"
#include "nn/gemm_fixed_order.hpp"

namespace {

// Register-only loops of 24 independent accumulators: the FP32 FMA and BF16 dot rates this core delivers right
// now, printed with the CPU's family and model because the VM does not always land on the same hardware:
// MACHINE.md's 220 / 443 GFLOP/s per core are a Zen 5 (family 26: two 512-bit FMA pipes, 64 FP32 FLOP/cycle);
// on a Zen 4 host (family 25, model 17: AVX-512 on 256-bit pipes, 32 FP32 FLOP/cycle) the same loops measure
// about half (≈ 115 / 235 at ≈ 3.5 GHz). The GEMM rates are printed beside them.
#define TREX_R24(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) \
  X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23)
#define TREX_DECL(i) __m512 a##i = _mm512_set1_ps(seed + float(i));
#define TREX_SUM(i) s = _mm512_add_ps(s, a##i);
__attribute__((target("avx512f"), noinline)) float fma_loop(long n, float seed) {
  TREX_R24(TREX_DECL)
  const __m512 x = _mm512_set1_ps(1.0f), y = _mm512_set1_ps(0.0f);
  for (long i = 0; i < n; ++i) {
#define TREX_FMA(i) a##i = _mm512_fmadd_ps(a##i, x, y);
    TREX_R24(TREX_FMA)
  }
  __m512 s = _mm512_setzero_ps();
  TREX_R24(TREX_SUM)
  return _mm512_reduce_add_ps(s);
}
__attribute__((target("avx512f,avx512bf16"), noinline)) float dot_loop(long n, float seed) {
  TREX_R24(TREX_DECL)
  const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80), y = (__m512bh)_mm512_setzero_si512();
  for (long i = 0; i < n; ++i) {
#define TREX_DOT(i) a##i = _mm512_dpbf16_ps(a##i, x, y);
    TREX_R24(TREX_DOT)
  }
  __m512 s = _mm512_setzero_ps();
  TREX_R24(TREX_SUM)
  return _mm512_reduce_add_ps(s);
}

// "CPU family F model M" from /proc/cpuinfo (AMD: family 25 = Zen 3/4, 26 = Zen 5).
std::string cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line, family = "?", model = "?";
  while (std::getline(f, line) && (family == "?" || model == "?")) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1), value = line.substr(colon + 2);
    if (key == "cpu family") family = value;
    if (key == "model") model = value;
  }
  return "CPU family " + family + " model " + model;
}

double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

struct Shape {
  const char* what;
  bool ta, tb;
  int64_t m, n, k;
};

enum class Kernel { sgemm, bf16, fixed_order };

double seconds_per_call(const trex::nn::GemmCall& g, Kernel kernel, int reps) {
  auto run = [&] {
    if (kernel == Kernel::bf16) {
      trex::nn::gemm_bf16(g);
    } else if (kernel == Kernel::fixed_order) {
      trex::nn::gemm_fixed_order(g);
    } else {
      trex::nn::gemm_batch({&g, 1});  // 1 OpenMP thread: one cblas_sgemm call
    }
  };
  run();
  // thread CPU time, best of `reps` calls: on the shared machine wall time mostly measures the other engineers'
  // load, and the minimum is the least disturbed call
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    timespec t0{}, t1{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    run();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    best = std::min(best, double(t1.tv_sec - t0.tv_sec) + 1e-9 * double(t1.tv_nsec - t0.tv_nsec));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const bool peak_only = argc > 1 && std::string(argv[1]) == "peak";  // only the core's rates (train bench)
  const int reps = argc > 1 && !peak_only ? std::atoi(argv[1]) : 5;
  omp_set_num_threads(1);
  const Shape shapes[] = {
      {"head fwd x W^T (2048x4096x256)", false, true, 2048, 4096, 256},
      {"head dx dy W (2048x256x4096)", false, false, 2048, 256, 4096},
      {"head dW dy^T x (4096x256x2048)", true, false, 4096, 256, 2048},
      {"expert up fwd (512x512x256)", false, true, 512, 512, 256},
      {"expert up fwd block (128x512x256)", false, true, 128, 512, 256},
      {"expert down fwd block (128x256x512)", false, true, 128, 256, 512},
      {"expert dW (512x256x512)", true, false, 512, 256, 512},
      {"shared up fwd (2048x512x256)", false, true, 2048, 512, 256},
      {"q_a fwd (2048x128x256)", false, true, 2048, 128, 256},
      {"q_b fwd (2048x256x128)", false, true, 2048, 256, 128},
      {"kv fwd (2048x64x256)", false, true, 2048, 64, 256},
      {"kv dx (2048x256x64)", false, false, 2048, 256, 64},
      {"kv dW (64x256x2048)", true, false, 64, 256, 2048},
      {"mHC mix fwd (2048x24x1024)", false, true, 2048, 24, 1024},
      {"mHC mix dX (2048x1024x24)", false, false, 2048, 1024, 24},
      {"mHC mix dW (24x1024x2048)", true, false, 24, 1024, 2048},
      {"router fwd (2048x8x256)", false, true, 2048, 8, 256},
  };
  std::string load;
  std::getline(std::ifstream("/proc/loadavg"), load);
  std::printf("load average: %s (1 thread per GEMM; rates from thread CPU time, best call)\n", load.c_str());
  {
    const long n = 20000000;
    double t0 = thread_seconds();
    volatile float r1 = fma_loop(n, 1.0f);
    double t1 = thread_seconds();
    volatile float r2 = dot_loop(n, 1.0f);
    double t2 = thread_seconds();
    (void)r1;
    (void)r2;
    std::printf("this core now: FP32 FMA %.0f GFLOP/s, BF16 dot %.0f GFLOP/s (register-only loops; %s; MACHINE.md's "
                "Zen 5, family 26: 220 / 443)\n",
                double(n) * 24 * 32 / (t1 - t0) * 1e-9, double(n) * 24 * 64 / (t2 - t1) * 1e-9, cpu_name().c_str());
  }
  if (peak_only) return 0;
  std::printf("%-38s %10s %10s %7s %11s %11s\n", "shape (m x n x k)", "fp32 GF/s", "bf16 GF/s", "ratio", "fixed GF/s",
              "fixed/fp32");
  double t32 = 0, t16 = 0, tfo = 0, fl = 0;
  for (const Shape& s : shapes) {
    const int64_t ar = s.ta ? s.k : s.m, ac = s.ta ? s.m : s.k, br = s.tb ? s.n : s.k, bc = s.tb ? s.k : s.n;
    std::vector<float> a(size_t(ar * ac), 0.5f), b(size_t(br * bc), 0.25f), c(size_t(s.m * s.n));
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 17) - 8) * 0.1f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 13) - 6) * 0.1f;
    const trex::nn::GemmCall g{s.ta, s.tb, s.m, s.n, s.k, 1.0f, a.data(), ac, b.data(), bc, 0.0f, c.data(), s.n};
    const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
    const double a32 = seconds_per_call(g, Kernel::sgemm, reps), a16 = seconds_per_call(g, Kernel::bf16, reps);
    const double afo = seconds_per_call(g, Kernel::fixed_order, reps);
    t32 += a32;
    t16 += a16;
    tfo += afo;
    fl += flops;
    std::printf("%-38s %10.1f %10.1f %6.2fx %11.1f %10.2fx\n", s.what, flops / a32 * 1e-9, flops / a16 * 1e-9, a32 / a16,
                flops / afo * 1e-9, a32 / afo);
  }
  std::printf("%-38s %10.1f %10.1f %6.2fx %11.1f %10.2fx\n", "all shapes (time-weighted)", fl / t32 * 1e-9,
              fl / t16 * 1e-9, t32 / t16, fl / tfo * 1e-9, t32 / tfo);
  return 0;
}
