// Error checking for CUDA runtime calls: TREX_CUDA_CHECK(call) throws trex::Error "file:line: call failed:
// cudaErrorX (the runtime's sentence)" — where the call was made, its text, the error's name and
// cudaGetErrorString. TREX_CUDA_CHECK_LAUNCH() checks the last kernel launch (cudaGetLastError) the same way.
// (cuBLASLt calls: TREX_CUBLAS_CHECK in blas.hpp.) CUDA builds only.
#pragma once
#include <cuda_runtime_api.h>

namespace trex::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line);

}  // namespace trex::cuda

#define TREX_CUDA_CHECK(call)                                                                  \
  do {                                                                                         \
    const cudaError_t trex_cuda_e_ = (call);                                                   \
    if (trex_cuda_e_ != cudaSuccess) ::trex::cuda::throw_cuda_error(trex_cuda_e_, #call, __FILE__, __LINE__); \
  } while (0)

#define TREX_CUDA_CHECK_LAUNCH() TREX_CUDA_CHECK(cudaGetLastError())
