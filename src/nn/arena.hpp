// Arena: a bump allocator for per-step activations. The first step sizes it (chunks are added as needed);
// reset() then folds the chunks into one block of the high-water size, so every later step of the same shape
// reuses the same memory without any malloc (MACHINE.md §3: first touch is slow, so allocate once).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace trex::nn {

class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // Uninitialised floats (64-byte aligned).
  float* floats(int64_t n) { return static_cast<float*>(raw(size_t(n) * sizeof(float))); }
  float* zeros(int64_t n) {
    float* p = floats(n);
    std::memset(p, 0, size_t(n) * sizeof(float));
    return p;
  }
  int32_t* ints(int64_t n) { return static_cast<int32_t*>(raw(size_t(n) * sizeof(int32_t))); }

  void* raw(size_t bytes) {
    bytes = (bytes + 63) & ~size_t(63);
    if (chunks_.empty() || used_ + bytes > chunks_.back().size) {
      size_t size = std::max(bytes, size_t(16) << 20);
      chunks_.push_back(Chunk{alloc(size), size});
      used_ = 0;
    }
    void* p = chunks_.back().data.get() + used_;
    used_ += bytes;
    total_ += bytes;
    high_water_ = std::max(high_water_, total_);
    return p;
  }

  // Stack discipline for temporaries: release(mark()) frees everything allocated after the mark (the
  // backward of a block releases its scratch before the next block's).
  struct Mark {
    size_t chunks = 0, used = 0, total = 0;
  };
  Mark mark() const { return Mark{chunks_.size(), used_, total_}; }
  void release(const Mark& m) {
    while (chunks_.size() > m.chunks && chunks_.size() > 1) chunks_.pop_back();  // only while sizing
    used_ = m.used;
    total_ = m.total;
  }

  // Forget every allocation; keeps the memory. After the first (sizing) step all chunks become one.
  // The folded block gets 1/8 headroom: sizes that depend on the data (MoE routing) can grow the high-water
  // mark by a few KB in a later step, and refolding without headroom re-faulted the whole block (~800 MB for the
  // bench preset) each time: 10-13% of the training CPU time went to page faults.
  void reset() {
    if (chunks_.size() > 1 || (!chunks_.empty() && chunks_[0].size < high_water_)) {
      const size_t size = high_water_ + high_water_ / 8;
      chunks_.clear();
      chunks_.push_back(Chunk{alloc(size), size});
      ++regrowths_;
    }
    used_ = 0;
    total_ = 0;
  }
  size_t high_water_bytes() const { return high_water_; }
  int64_t regrowths() const { return regrowths_; }  // how many times reset() had to reallocate

 private:
  struct Free {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };
  struct Chunk {
    std::unique_ptr<std::byte[], Free> data;
    size_t size = 0;
  };
  static std::unique_ptr<std::byte[], Free> alloc(size_t n) {
    return std::unique_ptr<std::byte[], Free>(new (std::align_val_t(64)) std::byte[n]);
  }
  std::vector<Chunk> chunks_;
  size_t used_ = 0, total_ = 0, high_water_ = 0;
  int64_t regrowths_ = 0;
};

}  // namespace trex::nn
