// The op-check harness (issue #24 point 5, ggml's test-backend-ops habit): every CUDA op runs on the same seeded
// inputs as its CPU reference (nn::*_ref, the oracle), forward and backward, and each output is compared element by
// element within a stated bound. One set of op checks (op_cases.hpp) has two drivers: the gpu-labelled GoogleTest
// suite (small and odd shapes; ops_test.cpp) and trex_cuda_op_perf (large shapes, perf mode: each op timed with
// events after a warm-up and reported with its achieved GB/s or TFLOP/s; op_perf.cpp).
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cuda/arena.hpp"
#include "cuda/stream.hpp"
#include "util/rng.hpp"

namespace trex::cuda::check {

// One output compared: pass when every |gpu - ref| <= atol + rtol * |ref| (or, with `bound`, <= bound[i]).
struct Compare {
  std::string what;
  int64_t n = 0, bad = 0, worst = -1;  // elements, elements out of bound, the worst one (by error / allowed)
  double max_abs = 0, worst_ratio = 0;  // largest |gpu - ref|; largest error / allowed (<= 1 passes)
  bool ok() const { return bad == 0 && n > 0; }
  std::string str() const;
};

struct OpReport {
  std::string op, shape;
  std::vector<Compare> checks;
  double ms = 0;       // perf mode: mean device time of one call (forward + backward when both are timed)
  double bytes = 0;    // bytes the timed calls must move at least (reads + writes), for GB/s
  double flops = 0;    // floating-point operations of the timed calls, for TFLOP/s (0: bandwidth-bound op)
  bool ok() const;
  std::string str() const;  // one line: op, shape, each check, and in perf mode time and rate
};

class Harness {
 public:
  // perf: time each op (iters calls after one warm-up). scratch: device arena for the ops' temporaries.
  explicit Harness(bool perf = false, int iters = 20, size_t scratch_bytes = size_t(256) << 20);
  bool perf() const { return perf_; }
  Stream& stream() { return stream_; }
  DeviceArena& scratch() { return scratch_; }

  template <class T>
  DeviceBuffer upload(const std::vector<T>& v) {
    DeviceBuffer b(v.size() * sizeof(T));
    b.upload(v.data(), v.size() * sizeof(T));
    return b;
  }
  template <class T>
  std::vector<T> download(const DeviceBuffer& b, size_t n) {
    stream_.synchronize();
    std::vector<T> v(n);
    if (n) b.download(v.data(), n * sizeof(T));
    return v;
  }
  // Mean milliseconds of fn() queued on stream() (1 warm-up, then iters), from events.
  double time_ms(const std::function<void()>& fn);
  int iters() const { return iters_; }

 private:
  bool perf_;
  int iters_;
  Stream stream_;
  DeviceArena scratch_;
};

std::vector<float> randn(Rng& r, size_t n, double scale = 1.0);
std::vector<float> uniform(Rng& r, size_t n, double lo, double hi);
Compare compare(const std::string& what, const std::vector<float>& gpu, const std::vector<float>& ref, double atol,
                double rtol);
Compare compare_bound(const std::string& what, const std::vector<float>& gpu, const std::vector<float>& ref,
                      const std::vector<double>& bound);
Compare compare_bits(const std::string& what, const std::vector<uint16_t>& gpu, const std::vector<uint16_t>& ref);
// Every float the same bits (a second call, or a result that must be the CPU's bits): "<what> (bitwise)".
Compare compare_bitwise(const std::string& what, const std::vector<float>& gpu, const std::vector<float>& ref);

}  // namespace trex::cuda::check
