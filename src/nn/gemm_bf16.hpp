// BF16 matrix products with fp32 accumulation (AVX-512-BF16, `vdpbf16ps`), the optional fast path of
// gemm()/gemm_batch(): while a Bf16MatmulScope is alive (and the CPU has AVX512_BF16), every GemmCall rounds
// its A and B operands to bfloat16 (round to nearest even) while packing them and accumulates the products in
// fp32; C, alpha and beta stay fp32. Master weights, gradients buffers and the optimizer stay fp32: this is
// the usual mixed-precision training recipe, twice the FP32 FMA rate on Zen 4/5. Off by default (the twin
// parity tests compare fp32); `trex train --matmul bf16` turns it on.
//
// Results depend only on the shapes and the blocking's kc (no atomics; gemm() uses one fixed blocking): the same bits on every run, like the fp32
// path. gemm_bf16_reference is the readable version: the same bf16 rounding of the inputs, products summed in
// double (tests/nn/gemm_bf16_test.cpp compares them).
#pragma once
#include <cstdint>

#include "nn/gemm.hpp"

namespace trex::nn {

// The rounding of a GEMM operand, exactly what vcvtne2ps2bf16 does: to nearest even; NaN stays a (quiet) NaN,
// inf stays inf, finite values that overflow become inf, and denormal inputs become a zero of the same sign (the
// instruction treats them as zero; model/quant.hpp's checkpoint conversion keeps them).
inline uint16_t float_to_bf16(float x) {
  uint32_t u;
  __builtin_memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // quiet NaN
  if ((u & 0x7f800000u) == 0) return uint16_t((u >> 16) & 0x8000u);         // zero or denormal -> signed zero
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}
inline float bf16_to_float(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float x;
  __builtin_memcpy(&x, &u, 4);
  return x;
}

// out[i] = float_to_bf16(x[i]) for n values (vcvtne2ps2bf16 where the CPU has it, the same bits).
void round_to_bf16(const float* x, uint16_t* out, int64_t n);

// True when this CPU runs the AVX512_BF16 kernel.
bool bf16_matmul_supported();

// While alive (nesting allowed; process-wide), gemm()/gemm_batch() use gemm_bf16 where supported. Throws
// trex::Error when the CPU lacks AVX512_BF16 (asking for bf16 and silently getting fp32 would mislead).
class Bf16MatmulScope {
 public:
  Bf16MatmulScope();
  ~Bf16MatmulScope();
  Bf16MatmulScope(const Bf16MatmulScope&) = delete;
  Bf16MatmulScope& operator=(const Bf16MatmulScope&) = delete;
};
bool bf16_matmul_active();

// Whether, under bf16 products, the producers of operands that several products read (the logits' gradient, the
// attention and shared-expert inputs, the grouped experts' operands) round them once into bf16 copies that the
// products read in place (GemmCall::a_bf16/b_bf16). On by default; off, every product rounds its fp32 operands
// itself. The same bits either way (tests/model/model_behaviour_test.cpp compares whole steps).
void set_bf16_operand_copies(bool on);
bool bf16_operand_copies();  // bf16_matmul_active() and on

// Cache blocking of the kernel (GotoBLAS/BLIS loops): kc along k (a B micro-panel of kc x 32 stays in L1), mc
// rows of A per block (in L2), nc columns of B per block (in L3). The 8 x 32 micro-tile is fixed (registers).
// Results depend on the shape and on kc (where the k sums are split), never on mc or nc. `trex tune gemm`
// searches this space (tune/gemm_tuner.hpp); gemm() always uses the default.
struct Bf16Blocking {
  int64_t kc = 512, mc = 128, nc = 512;
  static constexpr int64_t kMicroRows = 8, kMicroCols = 32;
  // Throws trex::Error unless kc is even and positive, mc a multiple of 8, nc a multiple of 32.
  void validate() const;
  bool operator==(const Bf16Blocking&) const = default;
};

// One call on the calling thread (single-threaded; gemm_batch spreads calls over threads). Requires
// bf16_matmul_supported().
void gemm_bf16(const GemmCall& g, const Bf16Blocking& blocking = Bf16Blocking{});
// Reference: inputs rounded with float_to_bf16, products summed in double.
void gemm_bf16_reference(const GemmCall& g);

}  // namespace trex::nn
