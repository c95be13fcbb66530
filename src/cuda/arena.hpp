// Device memory: DeviceArena, one cudaMalloc made once and handed out by a bump pointer (the per-step
// activations and scratch, and, in a second arena, the parameters, gradients and optimizer state), and
// DeviceBuffer, one owned allocation (tests, staging). The arena never grows: a request past its capacity throws
// trex::Error naming both sizes, so a step that would need more memory than planned fails loudly instead of
// calling cudaMalloc inside the step loop (the CPU arena's rule, nn/arena.hpp: allocate once, reuse every step).
// CUDA builds only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

namespace trex::cuda {

class DeviceArena {
 public:
  // One cudaMalloc of `capacity` bytes (rounded up to kAlign); `name` appears in its errors ("step arena").
  DeviceArena(size_t capacity, std::string name = "device arena");
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  static constexpr size_t kAlign = 256;  // cudaMalloc's own alignment: every block suits vector loads and cuBLASLt

  void* raw(size_t bytes);
  float* floats(int64_t n) { return static_cast<float*>(raw(size_t(n) * sizeof(float))); }
  uint16_t* bf16s(int64_t n) { return static_cast<uint16_t*>(raw(size_t(n) * sizeof(uint16_t))); }
  int32_t* ints(int64_t n) { return static_cast<int32_t*>(raw(size_t(n) * sizeof(int32_t))); }
  double* doubles(int64_t n) { return static_cast<double*>(raw(size_t(n) * sizeof(double))); }

  // Stack discipline for temporaries, as nn::Arena: release(mark()) frees what was allocated after the mark.
  struct Mark {
    size_t used = 0;
  };
  Mark mark() const { return Mark{used_}; }
  void release(const Mark& m) { used_ = m.used; }
  void reset() { used_ = 0; }  // forget every allocation (the next step reuses the same memory)

  size_t capacity() const { return capacity_; }
  size_t used_bytes() const { return used_; }
  size_t high_water_bytes() const { return high_water_; }
  const void* base() const { return base_; }

 private:
  std::string name_;
  std::byte* base_ = nullptr;
  size_t capacity_ = 0, used_ = 0, high_water_ = 0;
};

// One owned device allocation of `bytes` (cudaMalloc / cudaFree), with synchronous copies from and to the host.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr, o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }
  size_t bytes() const { return bytes_; }
  // host -> device, complete on return (checked against bytes()); device -> host, likewise. Neither orders itself
  // after work queued on a non-blocking Stream: synchronize that stream first.
  void upload(const void* host, size_t bytes, size_t offset = 0);
  void download(void* host, size_t bytes, size_t offset = 0) const;

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace trex::cuda
