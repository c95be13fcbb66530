// DeviceArena and DeviceBuffer (arena.hpp).
#include "cuda/arena.hpp"

#include <algorithm>
#include <cstdio>

#include "cuda/check.hpp"
#include "util/error.hpp"

namespace trex::cuda {

namespace {
std::string mib(size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1 << 20));
  return buf;
}
}  // namespace

DeviceArena::DeviceArena(size_t capacity, std::string name) : name_(std::move(name)) {
  capacity_ = (capacity + kAlign - 1) & ~(kAlign - 1);
  if (capacity_ == 0) throw Error(name_ + ": capacity must be positive");
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, capacity_);
  if (e != cudaSuccess)
    throw Error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + name_ + ": cudaMalloc of " +
                mib(capacity_) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  base_ = static_cast<std::byte*>(p);
}

DeviceArena::~DeviceArena() {
  if (base_) cudaFree(base_);  // no throw from a destructor; a failing free here means the context is gone anyway
}

void* DeviceArena::raw(size_t bytes) {
  // bytes > capacity_ first: a size near SIZE_MAX (a negative count cast) would round up to 0 and pass
  const size_t need = bytes > capacity_ ? capacity_ + 1 : (bytes + kAlign - 1) & ~(kAlign - 1);
  if (need > capacity_ - used_)
    throw Error(name_ + ": out of device memory: asked for " + mib(bytes) + " with " + mib(used_) + " of " +
                mib(capacity_) + " in use (the arena never grows: size it for the step, docs/cuda.md)");
  void* p = base_ + used_;
  used_ += need;
  high_water_ = std::max(high_water_, used_);
  return p;
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes) TREX_CUDA_CHECK(cudaMalloc(&p_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (p_) cudaFree(p_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) cudaFree(p_);
    p_ = o.p_;
    bytes_ = o.bytes_;
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::upload(const void* host, size_t bytes, size_t offset) {
  if (offset + bytes > bytes_)
    throw Error("DeviceBuffer::upload: " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                " past the buffer's " + std::to_string(bytes_));
  // From pageable memory cudaMemcpy may return before the DMA lands; kernels on a non-blocking stream do not wait
  // for the legacy stream, so wait for it here: the data is on the device when upload returns.
  TREX_CUDA_CHECK(cudaMemcpyAsync(static_cast<std::byte*>(p_) + offset, host, bytes, cudaMemcpyHostToDevice, 0));
  TREX_CUDA_CHECK(cudaStreamSynchronize(0));
}

void DeviceBuffer::download(void* host, size_t bytes, size_t offset) const {
  if (offset + bytes > bytes_)
    throw Error("DeviceBuffer::download: " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                " past the buffer's " + std::to_string(bytes_));
  TREX_CUDA_CHECK(cudaMemcpy(host, static_cast<const std::byte*>(p_) + offset, bytes, cudaMemcpyDeviceToHost));
}

}  // namespace trex::cuda
