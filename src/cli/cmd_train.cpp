// `trex train`: CPT / SFT training of a preset or config.json model on packed data (src/train/trainer.hpp,
// docs/train.md). `--device cuda` trains on the GPU model (cuda/gpu_train_step.hpp) in builds that have it (CUDA
// found at configure time); the device is checked before anything is read.
#include <memory>

#include "cli/command.hpp"
#include "cli/cuda_support.hpp"
#include "cuda/device_select.hpp"
#include "train/cpu_device_step.hpp"
#include "train/trainer.hpp"
#include "util/error.hpp"
#if TREX_HAVE_CUDA_MODEL
#include "cuda/gpu_train_step.hpp"
#endif

namespace cmd_train {  // this file's own names (the unity build joins cli files)

using trex::cli::kTrainsOnCuda;

// MFU denominators when --peak-gflops is not given: this machine's FP32 AVX-512 peak on 2 cores (MACHINE.md §1);
// on CUDA the H200's dense tensor-core bf16 peak, and its FP32 (CUDA-core) peak for fp32 products (no TF32).
double default_peak_gflops(bool cuda, const std::string& matmul) {
  if (!cuda) return 433.0;
  return matmul == "bf16" ? 989000.0 : 67000.0;
}

trex::cli::CommandRegistrar reg("train", "Train a model (CPT on packed documents, SFT on masked conversations)",
                                [](CLI::App& sub) -> trex::cli::Action {
  auto o = std::make_shared<trex::train::TrainOptions>();
  auto data = std::make_shared<std::string>(), out = std::make_shared<std::string>(),
       init = std::make_shared<std::string>(), tokenizer = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  auto device = std::make_shared<std::string>("cpu");
  auto cpu_device_step = std::make_shared<bool>(false);
  sub.add_option("--config", o->config, "Preset (tiny, bench, small) or config.json (default: --init's, else tiny)");
  sub.add_option("--data", *data, "Packed data folder (trex data pack: cpt.json or sft.json)")->required();
  sub.add_option("--mode", o->mode, "cpt or sft")->required()->check(CLI::IsMember({"cpt", "sft"}));
  sub.add_option("--init", *init, "Initial weights (checkpoint folder or .safetensors); required for sft");
  sub.add_option("--out", *out, "Output folder (step-N checkpoints, latest, metrics.jsonl)")->required();
  sub.add_option("--tokenizer", *tokenizer,
                 "tokenizer.json the data was packed with, copied into each checkpoint (default: found beside --init, "
                 "in --out or the two folders above it)");
  sub.add_option("--steps", o->steps, "Optimizer steps");
  sub.add_option("--lr", o->lr, "Peak learning rate");
  sub.add_option("--min-lr", o->min_lr, "Final learning rate of the cosine decay (default lr/10)");
  sub.add_option("--warmup", o->warmup, "Linear warm-up steps (default steps/10)");
  sub.add_option("--optimizer", o->optimizer, "adamw or muon (AdamW for embedding/head/norms/mHC under muon)")
      ->check(CLI::IsMember({"adamw", "muon"}));
  sub.add_option("--weight-decay", o->weight_decay, "AdamW weight decay (matrices only)");
  sub.add_option("--clip", o->clip, "Global gradient-norm clip (0: off)");
  sub.add_option("--micro-batch", o->micro_batch, "Sequences per micro-batch");
  sub.add_option("--grad-accum", o->grad_accum, "Micro-batches per optimizer step");
  sub.add_option("--seq-len", o->seq_len, "CPT window length (default 256); SFT: must equal the packed length");
  sub.add_option("--seed", o->seed, "Seed for initial weights and data order");
  sub.add_option("--save-every", o->save_every, "Checkpoint every N steps (0: only at the end)");
  sub.add_option("--keep", o->keep, "Checkpoints kept");
  sub.add_flag("--resume", o->resume, "Continue from OUT/latest when it exists");
  sub.add_flag("--freeze-router", o->freeze_router, "Do not update gate weights and gate biases (SFT launchers)");
  sub.add_flag("--indexer-warmup", o->indexer_warmup,
               "Dense indexer warm-up: CSA attends densely, KL over all visible entries, only the indexer learns");
  sub.add_option("--matmul", o->matmul, "Matrix products: fp32 (default) or bf16 (AVX512_BF16, fp32 accumulation)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  sub.add_option("--device", *device,
                 kTrainsOnCuda ? "cpu (default) or cuda (the GPU model, one device; refused with the reason when there "
                                 "is none)"
                               : "cpu (default) or cuda (this trex was built without CUDA: refused, with the reason)")
      ->check(CLI::IsMember(trex::cuda::device_names()));
  auto* peak = sub.add_option("--peak-gflops", o->peak_gflops,
                              "MFU denominator in GFLOP/s (default 433: FP32, 2 cores; cuda: 989000 for bf16, 67000 "
                              "for fp32, the H200's dense peaks)");
  sub.add_option("--spike-z", o->spike_z, "Skip a step whose loss or grad-norm z-score exceeds this (0: off)");
  sub.add_option("--spike-window", o->spike_window, "Steps in the spike guard's running window");
  sub.add_option("--dp", o->dp, "Data-parallel ranks (mpirun -np dp*ep*pp trex train ...)");
  sub.add_option("--ep", o->ep, "Expert-parallel ranks (split the routed experts)");
  sub.add_option("--pp", o->pp, "Pipeline stages (layers split by FLOPs; 1F1B over the --grad-accum micro-batches)");
  sub.add_option("--watchdog", o->watchdog_s, "Distributed: abort after this many seconds without progress");
  sub.add_flag("--json", o->json, "Print the final summary as JSON");
  sub.add_flag("--quiet", *quiet, "No progress line");
  sub.add_option("--inject-nan-step", o->inject_nan_step, "Test hook: poison the gradient at this step")
      ->group("");
  sub.add_option("--checkpoint-pause-ms", o->checkpoint_pause_ms, "Test hook: pause inside checkpoint writes")
      ->group("");
  sub.add_flag("--test-cpu-device-step", *cpu_device_step,
               "Test hook: train through the device-step interface on its CPU reference (train::CpuDeviceStep), the "
               "branch --device cuda takes")
      ->group("");
  return [o, data, out, init, tokenizer, quiet, device, peak, cpu_device_step] {
    const bool cuda = trex::cuda::parse_device(*device) == trex::cuda::Device::cuda;
    trex::cuda::require_device(trex::cuda::parse_device(*device), "trex train", kTrainsOnCuda);  // before any read
#if TREX_HAVE_CUDA_MODEL
    if (cuda) o->device_step = trex::cuda::make_gpu_train_step;
#endif
    if (*cpu_device_step) {
      if (cuda) throw trex::Error("--test-cpu-device-step and --device cuda exclude each other");
      o->device_step = [](const trex::train::DeviceStepConfig& c) {
        return std::make_unique<trex::train::CpuDeviceStep>(c);
      };
    }
    if (peak->count() == 0) o->peak_gflops = default_peak_gflops(cuda, o->matmul);
    o->data = *data;
    o->out = *out;
    o->init = *init;
    o->tokenizer = *tokenizer;
    o->progress = !*quiet;
    trex::train::train(*o);
    return 0;
  };
});

}  // namespace cmd_train
