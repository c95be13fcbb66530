// Arena: a bump allocator for per-step activations. The first step sizes it (chunks are added as needed);
// every later step walks the same chunks in the same order, so a step of the same shape reuses the memory the
// first one touched without any malloc or page fault (MACHINE.md §3: first touch is slow, so allocate once).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "nn/parallel_chunks.hpp"

namespace trex::nn {

class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // Uninitialised floats (64-byte aligned).
  float* floats(int64_t n) { return static_cast<float*>(raw(size_t(n) * sizeof(float))); }
  // Large blocks (the backward's gradients of the residual streams, 8 MB at the bench shape) are cleared on all
  // threads: a memset on one core left the others waiting (serialised inside an enclosing parallel region).
  float* zeros(int64_t n) {
    float* p = floats(n);
    for_chunks(p, n, [](float* b, float* e) { std::fill(b, e, 0.0f); }, /*min_chunks=*/8);
    return p;
  }
  int32_t* ints(int64_t n) { return static_cast<int32_t*>(raw(size_t(n) * sizeof(int32_t))); }
  uint16_t* bf16s(int64_t n) { return static_cast<uint16_t*>(raw(size_t(n) * sizeof(uint16_t))); }

  // An allocation that does not fit the rest of the current chunk moves on to the next chunk big enough (the
  // tail stays unused this step); past the last chunk a new one is added. Sizes that depend on the data (MoE
  // routing) may differ by a few KB from step to step: the chunks absorb that, and a step that needs more adds
  // one chunk (counted in regrowths()) instead of re-faulting the whole arena.
  void* raw(size_t bytes) {
    bytes = (bytes + 63) & ~size_t(63);
    while (cur_ < chunks_.size() && used_ + bytes > chunks_[cur_].size) {
      ++cur_;
      used_ = 0;
    }
    if (cur_ == chunks_.size()) {
      chunks_.push_back(Chunk{alloc(std::max(bytes, kMinChunk)), std::max(bytes, kMinChunk)});
      used_ = 0;
      if (sized_) ++regrowths_;
    }
    void* p = chunks_[cur_].data.get() + used_;
    used_ += bytes;
    total_ += bytes;
    high_water_ = std::max(high_water_, total_);
    return p;
  }

  // Stack discipline for temporaries: release(mark()) frees everything allocated after the mark (the
  // backward of a block releases its scratch before the next block's); the chunks stay for reuse.
  struct Mark {
    size_t chunk = 0, used = 0, total = 0;
  };
  Mark mark() const { return Mark{cur_, used_, total_}; }
  void release(const Mark& m) {
    cur_ = m.chunk;
    used_ = m.used;
    total_ = m.total;
  }

  // Forget every allocation; keeps the memory for the next step.
  void reset() {
    sized_ = !chunks_.empty();
    cur_ = 0;
    used_ = 0;
    total_ = 0;
  }
  size_t high_water_bytes() const { return high_water_; }  // the most bytes live at once
  size_t reserved_bytes() const {  // the chunks' total
    size_t n = 0;
    for (const Chunk& c : chunks_) n += c.size;
    return n;
  }
  int64_t regrowths() const { return regrowths_; }          // chunks added by steps after the first

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
  static constexpr size_t kMinChunk = size_t(64) << 20;  // large enough that unused tails stay a small share
  std::vector<Chunk> chunks_;
  size_t cur_ = 0, used_ = 0, total_ = 0, high_water_ = 0;
  bool sized_ = false;  // a step has run since the first chunk: new chunks from now on are regrowths
  int64_t regrowths_ = 0;
};

}  // namespace trex::nn
