// SquareSum (grad_norm.hpp): one block per 64K-element chunk.
#include "cuda/grad_norm.hpp"

#include <algorithm>

#include "cuda/check.hpp"
#include "cuda/reduce.cuh"

namespace trex::cuda {

namespace {

constexpr int kThreads = 256;

__global__ void chunk_square_sums(const float* x, const int64_t* chunks, double* partial) {
  const int64_t off = chunks[2 * blockIdx.x], n = chunks[2 * blockIdx.x + 1];
  double s = 0;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    const double v = double(x[off + i]);
    s += v * v;
  }
  s = detail::block_reduce(s, detail::Sum{}, 0.0);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

}  // namespace

SquareSum::SquareSum(const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  std::vector<int64_t> list;
  for (auto [off, n] : ranges)
    for (int64_t c = 0; c < n; c += kChunk) {
      list.push_back(off + c);
      list.push_back(std::min(kChunk, n - c));
    }
  partial_host_.assign(list.size() / 2, 0.0);
  chunks_ = DeviceBuffer(sizeof(int64_t) * std::max<size_t>(2, list.size()));
  partial_ = DeviceBuffer(sizeof(double) * std::max<size_t>(1, partial_host_.size()));
  if (!list.empty()) chunks_.upload(list.data(), sizeof(int64_t) * list.size());
}

double SquareSum::operator()(const float* x, cudaStream_t s) {
  const unsigned n = unsigned(partial_host_.size());
  if (n == 0) return 0;
  chunk_square_sums<<<n, kThreads, 0, s>>>(x, chunks_.as<int64_t>(), partial_.as<double>());
  TREX_CUDA_CHECK_LAUNCH();
  TREX_CUDA_CHECK(cudaStreamSynchronize(s));
  partial_.download(partial_host_.data(), sizeof(double) * n);
  double sum = 0;
  for (double p : partial_host_) sum += p;  // chunk order, as the CPU
  return sum;
}

}  // namespace trex::cuda
