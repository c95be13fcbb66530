// Arena: later steps reuse the first step's chunks in order (same addresses, no new allocation), temporaries
// released by mark/release are reused, and a step that needs more adds a chunk and counts it.
#include "nn/arena.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

using trex::nn::Arena;

// One "step": sizes in floats; returns the addresses handed out.
std::vector<float*> step(Arena& a, const std::vector<int64_t>& sizes) {
  a.reset();
  std::vector<float*> out;
  for (int64_t n : sizes) out.push_back(a.floats(n));
  return out;
}

TEST(Arena, LaterStepsReuseTheFirstStepsMemory) {
  Arena a;
  // 20M floats (80 MB) do not fit the rest of a 64 MB chunk: a second chunk; the small ones after it share it.
  const std::vector<int64_t> sizes = {1 << 20, 20 << 20, 3 << 20, 5, 1 << 22};
  const auto first = step(a, sizes);
  const size_t reserved = a.reserved_bytes();
  for (int s = 0; s < 3; ++s) EXPECT_EQ(step(a, sizes), first);
  EXPECT_EQ(a.reserved_bytes(), reserved);
  EXPECT_EQ(a.regrowths(), 0);
  for (float* p : first) EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  // distinct allocations never overlap
  for (size_t i = 0; i + 1 < first.size(); ++i) {
    if (first[i + 1] > first[i]) {
      EXPECT_GE(first[i + 1] - first[i], sizes[i]);
    }
  }
}

TEST(Arena, ReleasedTemporariesAreReused) {
  Arena a;
  a.reset();
  float* keep = a.floats(100);
  const auto m = a.mark();
  float* tmp = a.floats(1 << 20);
  a.release(m);
  EXPECT_EQ(a.floats(1 << 20), tmp);
  EXPECT_NE(keep, tmp);
  EXPECT_EQ(a.high_water_bytes(), size_t(448 + (4 << 20)));  // 100 floats = 400 bytes, rounded up to 64-byte lines
}

TEST(Arena, ALargerLaterStepAddsOneChunkAndCountsIt) {
  Arena a;
  step(a, {1 << 20});
  EXPECT_EQ(a.regrowths(), 0);
  step(a, {1 << 20, 20 << 20});  // 84 MB: more than the first chunk holds
  EXPECT_EQ(a.regrowths(), 1);
  const size_t reserved = a.reserved_bytes();
  step(a, {1 << 20, 20 << 20});
  step(a, {1 << 20});
  EXPECT_EQ(a.regrowths(), 1);
  EXPECT_EQ(a.reserved_bytes(), reserved);
}

}  // namespace
