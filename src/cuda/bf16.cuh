// nn::float_to_bf16 on the device, bit for bit (nn/gemm_bf16.hpp): round to nearest even, NaN stays a quiet NaN,
// a zero or denormal becomes a zero of the same sign. Shared by elementwise.cu and xent.cu.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace trex::cuda::detail {

__device__ __forceinline__ uint16_t to_bf16(float x) {
  uint32_t u = __float_as_uint(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
  if ((u & 0x7f800000u) == 0) return uint16_t((u >> 16) & 0x8000u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

}  // namespace trex::cuda::detail
