// The training loop of `trex train`: continued pre-training on packed documents (CPT) and supervised
// fine-tuning on masked conversations (SFT, from an initial checkpoint, optionally with a frozen router).
// Per optimizer step: grad_accum micro-batches (gradients accumulated, then averaged), data-parallel reduce,
// global-norm clipping, the loss-spike guard, AdamW or Muon (optimizer.hpp) at the warmup + cosine LR, and
// the auxiliary-loss-free gate-bias update. Metrics go to OUT/metrics.jsonl and a live progress line;
// checkpoints (train_checkpoint.hpp) allow exact resume: the only state besides weights and optimizer moments
// is the data-loader position and the spike-guard window, all saved.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "train/device_step.hpp"
#include "train/optimizer.hpp"

namespace trex::train {

struct TrainOptions {
  std::string config;              // preset name or config.json (ignored on resume: the checkpoint's config)
  std::filesystem::path data;      // packed folder (cpt.json or sft.json)
  std::string mode = "cpt";        // cpt | sft
  std::filesystem::path init;      // initial weights (required for sft)
  std::filesystem::path out;
  // tokenizer.json the data was packed with, copied into every checkpoint (a whole Hugging Face folder); empty:
  // looked for beside --init, in --out and the two folders above it.
  std::filesystem::path tokenizer;
  int64_t steps = 100;
  double lr = 3e-4;
  double min_lr = -1;              // < 0: lr / 10
  int64_t warmup = -1;             // < 0: steps / 10
  std::string optimizer = "adamw";
  double weight_decay = 0.01;
  double clip = 1.0;               // global-norm clip (<= 0: off)
  int64_t micro_batch = 4;
  int64_t grad_accum = 1;
  int64_t seq_len = 0;             // CPT window (0: 256); SFT: must match the data when given
  uint64_t seed = 1234;            // weight init and data order
  int64_t save_every = 0;          // 0: only at the end
  int keep = 2;
  bool resume = false;
  bool freeze_router = false;
  // Dense indexer warm-up (DEEPSEEK_V4.md §5, V3.2): CSA layers attend densely, the indexer's KL runs over every
  // visible entry, and only the indexer's tensors are updated (no gate-bias update).
  bool indexer_warmup = false;
  // Matrix products: "fp32" (default; what the twin-parity tests check) or "bf16" (AVX512_BF16 operands, fp32
  // accumulation, fp32 master weights and optimizer: nn/gemm_bf16.hpp). Part of the resume identity.
  std::string matmul = "fp32";
  double peak_gflops = 433.0;      // MFU denominator (MACHINE.md §1, FP32 AVX-512 on 2 cores)
  double spike_z = 6.0;            // spike guard threshold (<= 0: off)
  int spike_window = 50;
  int spike_min_samples = 20;
  bool json = false;               // print the final summary as JSON on stdout
  bool progress = true;            // live progress line on stderr (when it is a terminal)
  // Test hooks (fault injection): poison the gradient at this step (1-based; 0 = never), and sleep while
  // writing a checkpoint so a test can kill the process mid-write.
  int64_t inject_nan_step = 0;
  int checkpoint_pause_ms = 0;
  // Parallel layout under MPI (mpirun -np dp*ep*pp trex train ... --dp a --ep b --pp c): the dp*ep data ranks each
  // take their slice of every micro-batch (micro_batch divisible by dp*ep); the routed experts are split over
  // the ep ranks of each expert group; gradients are all-reduced in buckets overlapped with backward. Rank 0
  // writes metrics and checkpoints (the one-process format: any layout resumes any other). 1,1,1: no MPI.
  // pp > 1: the layers are split into pp stages balanced by FLOPs, and the grad_accum micro-batches of a step run
  // through them in a 1F1B schedule (dist/pipeline.hpp). Memory is split: a rank holds only its stage's layers
  // and its own routed experts (dist/model_shards.hpp), and ZeRO-1 shards the optimizer state over each tensor's
  // replicas (train/sharded_optimizer.hpp).
  int dp = 1, ep = 1, pp = 1;
  double watchdog_s = 300;  // distributed: abort the job after this long without progress (a peer died/hangs)
  // The model and optimizer on a device (train/device_step.hpp; `trex train --device cuda` sets the CUDA one);
  // empty: the CPU. One process only. Not part of the resume identity: a run moves between devices through its
  // checkpoints.
  DeviceStepFactory device_step;
};

// Checks the options without touching the disk beyond reading; throws trex::Error with a clear message.
void validate_options(const TrainOptions& o);

// Runs (or resumes) training; returns the summary (also printed). Throws trex::Error on bad input and on a
// non-finite loss or gradient (the last checkpoint is left intact).
nlohmann::json train(const TrainOptions& o);

}  // namespace trex::train
