// The message of TREX_CUDA_CHECK (check.hpp).
#include "cuda/check.hpp"

#include <string>

#include "util/error.hpp"

namespace trex::cuda {

void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + cudaGetErrorName(e) + " (" +
              cudaGetErrorString(e) + ")");
}

}  // namespace trex::cuda
