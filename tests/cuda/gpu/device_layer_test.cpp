// The device layer on a device (src/cuda/arena.hpp, stream.hpp): the arena hands out aligned blocks from its one
// allocation, reuses them after reset and release(mark), and refuses to grow with a message naming the sizes;
// buffers round-trip; events time queued work. gpu-labelled: skipped with the reason without a device.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/arena.hpp"
#include "cuda/check.hpp"
#include "cuda/ops.hpp"
#include "cuda/stream.hpp"
#include "gpu_test.hpp"
#include "util/error.hpp"

using namespace trex::cuda;

TEST(CudaDeviceLayer, ArenaAllocatesOnceAndReuses) {
  TREX_REQUIRE_GPU();
  DeviceArena a(size_t(1) << 20, "test arena");
  EXPECT_EQ(a.capacity(), size_t(1) << 20);
  float* p = a.floats(10);
  uint16_t* q = a.bf16s(3);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % DeviceArena::kAlign, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % DeviceArena::kAlign, 0u);
  EXPECT_EQ(static_cast<const void*>(p), a.base());
  const DeviceArena::Mark m = a.mark();
  int32_t* r = a.ints(1000);
  a.release(m);
  EXPECT_EQ(a.ints(1000), r);  // released memory is handed out again
  a.reset();
  EXPECT_EQ(a.floats(10), p);  // the next step walks the same memory
  EXPECT_EQ(a.high_water_bytes(), size_t(256 * 2 + 4096));
  try {
    a.raw(size_t(2) << 20);
    FAIL() << "an arena request past capacity did not throw";
  } catch (const trex::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("test arena: out of device memory: asked for 2.0 MiB"), std::string::npos) << msg;
    EXPECT_NE(msg.find("of 1.0 MiB in use"), std::string::npos) << msg;
  }
  // a size that would wrap when rounded up to the alignment (a negative count cast to size_t) is refused too
  EXPECT_THROW(a.raw(SIZE_MAX), trex::Error);
  EXPECT_THROW(a.floats(int64_t(-1)), trex::Error);
}

TEST(CudaDeviceLayer, BufferRoundTripAndBoundsCheck) {
  TREX_REQUIRE_GPU();
  std::vector<float> x(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) * 0.5f;
  DeviceBuffer b(x.size() * 4);
  b.upload(x.data(), x.size() * 4);
  std::vector<float> y(x.size());
  b.download(y.data(), y.size() * 4);
  EXPECT_EQ(x, y);
  EXPECT_THROW(b.upload(x.data(), x.size() * 4, 4), trex::Error);
}

TEST(CudaDeviceLayer, EventsTimeQueuedWork) {
  TREX_REQUIRE_GPU();
  Stream s;
  const int64_t n = int64_t(1) << 24;
  DeviceBuffer x(size_t(n) * 4), out(size_t(n) * 2);
  TREX_CUDA_CHECK(cudaMemsetAsync(x.as<void>(), 0, size_t(n) * 4, s));
  Event a, b;
  a.record(s);
  for (int i = 0; i < 10; ++i) round_to_bf16(x.as<float>(), out.as<uint16_t>(), n, s);
  b.record(s);
  const float ms = Event::elapsed_ms(a, b);
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 10000.0f);
  s.synchronize();
}
