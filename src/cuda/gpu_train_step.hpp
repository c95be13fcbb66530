// train::DeviceStep on one CUDA device: the GPU model (gpu_model.hpp), the device optimizer (device_optimizer.hpp) and
// the gradient norm (grad_norm.hpp) behind the trainer's device interface — `trex train --device cuda`. Per optimizer
// step: gradients zeroed, each micro-batch's forward and backward accumulated on the device, scaled by 1 / micro-
// batches, the norm over the updated tensors, the clipped AdamW / Muon update (bf16 copies refreshed as each tensor is
// written), the gate-bias update. Under --dp N every rank holds a whole replica on its device (rank % devices): the
// gradients are averaged over the ranks by a DeviceGroup (device_group.hpp: NCCL where each rank has its own GPU, else
// staged through the host over MPI), the expert loads summed before the gate-bias update. Weights come and go through
// the GPU model's host copy (init, checkpoints); moments through DeviceOptimizer's state, laid out as the checkpoints
// keep them. Checked against train::CpuDeviceStep, step by step (compare_train_steps in
// tests/cuda/gpu/model_parity.cpp, the CudaModel.Trainer* gpu tests). CUDA builds only.
#pragma once
#include <memory>

#include "train/device_step.hpp"

namespace trex::cuda {

// Throws trex::Error when no CUDA device is usable (with the reason) or the model does not fit.
std::unique_ptr<train::DeviceStep> make_gpu_train_step(const train::DeviceStepConfig& cfg);

}  // namespace trex::cuda
