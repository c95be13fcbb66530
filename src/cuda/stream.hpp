// Streams and events: Stream owns a non-blocking cudaStream_t (work on it does not serialise with the legacy
// default stream), Event a cudaEvent_t with timing; elapsed_ms(a, b) is the device time between two recorded
// events (the op perf mode times kernels with it). Every call is checked (check.hpp). CUDA builds only.
#pragma once
#include <cuda_runtime_api.h>

namespace trex::cuda {

class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  operator cudaStream_t() const { return s_; }
  void synchronize() const;  // waits for the stream's work; throws with the first error a kernel on it raised

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s);
  void wait_on(cudaStream_t s) const;  // work queued on s after this waits for the event (cross-stream order)
  void synchronize() const;
  // Milliseconds of device time from `start` to `end` (both recorded; end waited for).
  static float elapsed_ms(const Event& start, const Event& end);

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace trex::cuda
