// Optimizer updates on the device, the CUDA twins of train::Optimizer's per-tensor updates (train/optimizer.cpp):
// AdamW on fp32 master weights, and Muon — momentum, DeepSeek-V4's hybrid quintic Newton–Schulz orthogonalisation
// (its GEMMs through cuBLASLt, blas.hpp) and the scaled update. The formulas, constants and the order of each
// element's float operations are the CPU trainer's; tests/cuda/gpu/ compares every one of these against
// train::Optimizer and train::newton_schulz_reference on the same inputs. Each update can also write a bf16 copy of
// the new parameters (nn::float_to_bf16's bits: the operands of the next step's bf16 GEMMs). Deterministic: no
// atomics, every sum in a fixed order for a shape. CUDA builds only.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/arena.hpp"
#include "cuda/blas.hpp"

namespace trex::cuda {

// The per-tensor constants of one AdamW step, computed on the host exactly as train::Optimizer::adamw_tensor does
// (bias corrections in double, then rounded to float).
struct AdamWConstants {
  float decay = 1;         // 1 - lr * weight_decay
  float beta1 = 0.9f, beta2 = 0.999f;
  float step = 0;          // lr / (1 - beta1^t)
  float inv_sqrt_bc2 = 1;  // 1 / sqrt(1 - beta2^t)
  float eps = 1e-8f;
};
// t: the 1-based step count (train::Optimizer::steps() after its ++); weight_decay: the tensor's (the CPU gives
// 1-D tensors none unless decay_1d).
AdamWConstants adamw_constants(double lr, int64_t t, double beta1, double beta2, double eps, double weight_decay);

// One AdamW step over n elements: g' = g * grad_scale; m = b1 m + (1 - b1) g'; v = b2 v + (1 - b2) g'^2;
// p = p decay - step m / (sqrt(v) inv_sqrt_bc2 + eps). p_bf16 (may be null): the new p rounded to bf16.
void adamw_update(float* p, const float* g, float* m, float* v, int64_t n, float grad_scale, const AdamWConstants& c,
                  uint16_t* p_bf16, cudaStream_t s);

// DeepSeek-V4's hybrid Newton–Schulz schedule (train/optimizer.cpp): steps 0-7 (3.4445, -4.7750, 2.0315), then
// (2, -1.5, 0.5). Each step: A = X X^T, B = b A + c A A, X = a X + B X on the wide orientation.
struct NsCoefficients {
  double a, b, c;
};
NsCoefficients newton_schulz_coefficients(int step_index);  // 0-based

// Newton–Schulz orthogonalisation of x [rows, cols] (row-major) in place, train::newton_schulz_reference's
// algorithm: x / (||x||_F + 1e-7) (the squares summed in double), then `steps` iterations on the wide orientation
// (a tall x is not transposed: its products are taken as X^T X and X B^T). type bf16: each product's operands
// rounded to bf16 (fp32 accumulation, fp32 iterates); fp32: fp32 operands. Temporaries come from `scratch`
// (released before returning; newton_schulz_scratch_bytes says how much).
void newton_schulz(Blas& blas, float* x, int64_t rows, int64_t cols, int steps, GemmType type, DeviceArena& scratch,
                   cudaStream_t s);
size_t newton_schulz_scratch_bytes(int64_t rows, int64_t cols, GemmType type);

// Muon's settings (train::OptimizerConfig's muon_* fields).
struct MuonSettings {
  double momentum = 0.95, weight_decay = 0.1;
  bool nesterov = true;
  double scale = 0.18;  // O = NS(.) * sqrt(max(rows, cols)) * scale
  int ns_steps = 10;
};

// One Muon step of a rows x cols matrix, train::Optimizer::muon_tensor's: m = mu m + g grad_scale; X = mu m +
// g grad_scale (Nesterov) or m; X = NS(X); p = p (1 - lr wd) - lr sqrt(max(rows, cols)) scale X. p_bf16 as for
// AdamW. Scratch: the momentum copy and the Newton–Schulz temporaries (muon_scratch_bytes), released on return.
void muon_update(Blas& blas, float* p, const float* g, float* m, int64_t rows, int64_t cols, double lr,
                 float grad_scale, const MuonSettings& settings, GemmType type, uint16_t* p_bf16,
                 DeviceArena& scratch, cudaStream_t s);
size_t muon_scratch_bytes(int64_t rows, int64_t cols, GemmType type);

}  // namespace trex::cuda
