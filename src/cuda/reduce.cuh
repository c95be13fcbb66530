// Block-wide sum and max for the row kernels (rmsnorm.cu, xent.cu): warp shuffles, then one value per warp in
// shared memory, in a fixed order (deterministic for a given block size). Every thread gets the result.
#pragma once
#include <cuda_runtime.h>

namespace trex::cuda::detail {

template <class T, class Op>
__device__ T block_reduce(T v, Op op, T identity) {
  __shared__ T part[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();  // part[] may still be read by a previous call
  if (lane == 0) part[warp] = v;
  __syncthreads();
  T r = lane < warps ? part[lane] : identity;
  for (int o = 16; o > 0; o >>= 1) r = op(r, __shfl_xor_sync(0xffffffffu, r, o));
  return r;
}

struct Sum {
  template <class T>
  __device__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

}  // namespace trex::cuda::detail
