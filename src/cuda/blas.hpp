// Matrix products on the device through cuBLASLt, in trex's row-major convention (nn/gemm.hpp's GemmCall):
// C[m,n] = alpha op(A) op(B) + beta C. Two operand types, both accumulating in fp32 (CUBLAS_COMPUTE_32F, never
// TF32): fp32 operands, and bf16 operands (rounded on the device by round_to_bf16, ops.hpp, the bits of
// nn::float_to_bf16) — the CPU's --matmul bf16 recipe. C is fp32 in both.
// Blas owns the cuBLASLt handle and one workspace allocated once; each distinct shape's matmul descriptors and
// heuristic algorithm are made on first use and cached (no per-call heuristic query in a step loop).
// CUDA builds only; cuBLASLt (not cuBLAS), opened when the first Blas is made (cublaslt_api.hpp).
#pragma once
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <tuple>

#include "cuda/arena.hpp"

namespace trex::cuda {

[[noreturn]] void throw_cublas_error(cublasStatus_t s, const char* call, const char* file, int line);

enum class GemmType { fp32, bf16 };

// Row-major, as nn::GemmCall. a and b: float* (fp32) or uint16_t* bf16 bits (bf16); c: float*.
struct DeviceGemm {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  const void* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr;
  int64_t ldb = 0;
  float beta = 0.0f;
  float* c = nullptr;
  int64_t ldc = 0;
  GemmType type = GemmType::fp32;
};

class Blas {
 public:
  explicit Blas(size_t workspace_bytes = size_t(32) << 20);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;

  // Queues the product on `stream`. Throws trex::Error for bad shapes or leading dimensions, and when cuBLASLt has
  // no algorithm for the case (naming it).
  void gemm(const DeviceGemm& g, cudaStream_t stream);
  size_t cached_plans() const { return plans_.size(); }

 private:
  struct Plan;
  // type, trans_a, trans_b, m, n, k, lda, ldb, ldc, alignment of a, b, c (bytes, up to 256)
  using Key = std::tuple<int, bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int, int, int>;
  const Plan& plan(const DeviceGemm& g);
  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
  std::map<Key, Plan*> plans_;
};

}  // namespace trex::cuda

#define TREX_CUBLAS_CHECK(call)                                                                   \
  do {                                                                                            \
    const cublasStatus_t trex_cublas_s_ = (call);                                                 \
    if (trex_cublas_s_ != CUBLAS_STATUS_SUCCESS)                                                  \
      ::trex::cuda::throw_cublas_error(trex_cublas_s_, #call, __FILE__, __LINE__);                \
  } while (0)
