// for_chunks: a pass over a long array (the gradient buffer, a large arena block) split over the OpenMP threads
// in fixed 64K-element chunks, so one core does not stream tens of MB while the other waits. Called inside a
// parallel region it runs on the calling thread.
#pragma once
#include <algorithm>
#include <cstdint>

namespace trex::nn {

// fn(first, last) for each chunk of [p, p + n); one thread when there are fewer than min_chunks chunks.
template <class T, class Fn>
void for_chunks(T* p, int64_t n, Fn fn, int64_t min_chunks = 2) {
  constexpr int64_t kChunk = int64_t(1) << 16;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks >= min_chunks)
  for (int64_t c = 0; c < chunks; ++c) fn(p + c * kChunk, p + std::min(n, (c + 1) * kChunk));
}

}  // namespace trex::nn
