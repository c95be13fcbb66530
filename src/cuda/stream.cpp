// Stream and Event (stream.hpp).
#include "cuda/stream.hpp"

#include "cuda/check.hpp"

namespace trex::cuda {

Stream::Stream() { TREX_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
Stream::~Stream() {
  if (s_) cudaStreamDestroy(s_);
}
void Stream::synchronize() const { TREX_CUDA_CHECK(cudaStreamSynchronize(s_)); }

Event::Event() { TREX_CUDA_CHECK(cudaEventCreate(&e_)); }
Event::~Event() {
  if (e_) cudaEventDestroy(e_);
}
void Event::record(cudaStream_t s) { TREX_CUDA_CHECK(cudaEventRecord(e_, s)); }
void Event::wait_on(cudaStream_t s) const { TREX_CUDA_CHECK(cudaStreamWaitEvent(s, e_, 0)); }
void Event::synchronize() const { TREX_CUDA_CHECK(cudaEventSynchronize(e_)); }
float Event::elapsed_ms(const Event& start, const Event& end) {
  end.synchronize();
  float ms = 0;
  TREX_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, end.e_));
  return ms;
}

}  // namespace trex::cuda
