// `trex dist-train`: data-, expert- and pipeline-parallel training of a preset on deterministic synthetic batches under MPI
// (mpirun -np N trex dist-train --dp a --ep b ...). It exercises the distributed pieces end to end — MPI process
// groups, bucketed all-reduce overlapped with backward, ZeRO-1 sharded optimizer, MoE token dispatch/combine
// over the expert group, globally reduced routing statistics, checkpoints in the canonical (one-process)
// layout, watchdog — and is what the equivalence, fault and bench runs use: for a fixed global batch every
// layout gives the same loss curve. Rank 0 writes one JSON line per step with the timing breakdown.
//
// Expert parallelism: the dp*ep ranks all take different rows of the global batch (the expert group's ranks are
// data-parallel for everything but the routed experts); rank j of an expert group holds and computes experts
// [j*E/ep, (j+1)*E/ep) for the rows of the whole group — weights, gradients and optimizer state of the other
// experts live only on their owners (dist/model_shards.hpp). An expert's gradient is summed over the dp ranks
// holding the same shard, the shared tensors' over the dp*ep ranks of the stage, both divided by dp*ep.
//
// Pipeline parallelism: the global batch is cut into --micro-batches micro-batches (each split over the data
// ranks as above); the layers are split into pp stages balanced by per-layer FLOPs (dist/stage_plan.hpp) and the
// micro-batches run through them in a 1F1B schedule (dist/pipeline.hpp). Every rank of a pipeline takes the
// same rows. A stage holds only its layers (the embedding on the first stage and, for MTP, the last; head and
// MTP on the last); the embedding's gradient is summed over both ends.
//
// Every replica region's gradients go through the bucketed, overlapped all-reduce on its own communicator;
// ZeRO-1 (train/sharded_optimizer.hpp, shared with `trex train`) shards each region's optimizer state over its
// replicas and all-gathers the updated shards; the gradient-norm clip uses the global norm (each element once).
// Checkpoints are gathered into the canonical one-process layout on rank 0 and scattered on resume, so any layout
// resumes any other. Rank 0 prints each rank's memory (parameters + gradients + optimizer state) at start.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "dist/grad_sync.hpp"
#include "dist/layout.hpp"
#include "dist/mpi_process_group.hpp"
#include "dist/model_shards.hpp"
#include "dist/mpi_runtime.hpp"
#include "dist/pipeline.hpp"
#include "dist/watchdog.hpp"
#include "dist/zero_shards.hpp"
#include "model/config.hpp"
#include "model/model.hpp"
#include "model/model_info.hpp"
#include "model/checkpoint.hpp"
#include "train/optimizer.hpp"
#include "train/sharded_optimizer.hpp"
#include "train/train_step.hpp"
#include "train/train_checkpoint.hpp"
#include "util/atomic_file.hpp"
#include "util/jsonl.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"
#include "util/timer.hpp"

namespace cmd_dist_train {  // this file's own names (the unity build joins cli files)

struct Opts {
  std::string config = "tiny";
  int64_t steps = 50, global_batch = 4, seq_len = 64;
  uint64_t seed = 1234;
  double lr = 3e-4, clip = 1.0;
  std::string optimizer = "adamw";
  int dp = 1, ep = 1, pp = 1;
  int64_t micro_batches = 1;  // micro-batches per step (gradient accumulation; the pipeline's 1F1B units)
  bool no_overlap = false, no_zero = false;
  double bucket_mb = 16;
  std::string metrics;
  double watchdog_s = 60;
  std::string fault;  // die | hang
  int fault_rank = -1;
  int64_t fault_step = 0;
  std::string out;          // checkpoint folder (OUT/step-N, OUT/latest), written by rank 0
  int64_t save_every = 0;   // 0: only at the end (when --out is given)
  bool resume = false;      // continue from OUT/latest (saved by any layout)
};

// Row `row` of the global batch at `step`: a noisy affine walk over the first 61 token ids (a small alphabet, so
// the loss falls visibly within a few dozen steps; deterministic in seed, step and row).
void make_row(const Opts& o, int64_t vocab_size, int64_t step, int64_t row, int32_t* out) {
  trex::Rng rng = trex::Rng::derive(o.seed, uint64_t(step) * 1000003ULL + uint64_t(row));
  const int64_t vocab = std::min<int64_t>(vocab_size, 61);
  const int64_t mult = 3 + 2 * rng.uniform_int(0, 3);
  int64_t x = rng.uniform_int(0, vocab - 1);
  for (int64_t t = 0; t < o.seq_len; ++t) {
    out[t] = int32_t(x);
    x = rng.uniform() < 0.1 ? rng.uniform_int(0, vocab - 1) : (x * mult + 7) % vocab;
  }
}

int run(const Opts& o) {
  trex::dist::MpiRuntime mpi(nullptr, nullptr);
  const trex::dist::Layout layout{o.dp, o.ep, o.pp};
  trex::dist::validate_layout(layout, mpi.world_size());
  const int data_ranks = o.dp * o.ep;  // ranks that take different rows of the batch
  if (o.micro_batches < 1) throw trex::Error("--micro-batches must be >= 1");
  if (o.global_batch % (o.micro_batches * data_ranks) != 0)
    throw trex::Error(fmt::format("--global-batch {} is not divisible by micro-batches * dp * ep = {} * {}",
                                  o.global_batch, o.micro_batches, data_ranks));
  if (o.resume && o.out.empty()) throw trex::Error("--resume needs --out (the folder holding latest)");
  if (o.steps < 1 || o.seq_len < 2) throw trex::Error("--steps must be >= 1 and --seq-len >= 2");
  if (o.fault != "" && o.fault != "die" && o.fault != "hang")
    throw trex::Error("--fault must be die or hang (got '" + o.fault + "')");

  trex::dist::Watchdog watchdog(o.watchdog_s);
  trex::dist::MpiProcessGroup dp_group(MPI_COMM_WORLD);  // the world: gradients, losses, routing statistics
  const int rank = dp_group.rank();
  const auto coords = trex::dist::coords_of(layout, rank);
  MPI_Comm ep_comm = MPI_COMM_NULL;  // ranks sharing the dp index: one expert group
  trex::dist::check_mpi(MPI_Comm_split(MPI_COMM_WORLD, coords.pp * o.dp + coords.dp, coords.ep, &ep_comm),
                        "Comm_split");
  trex::dist::MpiProcessGroup ep_group(ep_comm);
  MPI_Comm_free(&ep_comm);
  ep_group.set_overlap(!o.no_overlap);
  MPI_Comm pp_comm = MPI_COMM_NULL;  // the stages of this rank's pipeline, in stage order
  trex::dist::check_mpi(MPI_Comm_split(MPI_COMM_WORLD, coords.dp * o.ep + coords.ep, coords.pp, &pp_comm),
                        "Comm_split");
  const int data_index = rank % data_ranks;  // = coords.dp * ep + coords.ep: which rows this rank takes
  const auto cfg = trex::model::load_model_config(o.config);
  if (cfg.n_routed_experts % o.ep != 0)
    throw trex::Error(fmt::format("--ep {} does not divide the {} routed experts of {}", o.ep,
                                  cfg.n_routed_experts, o.config));
  const auto plan = trex::dist::plan_stages(cfg, o.seq_len, o.pp);
  trex::dist::ReplicaGroups replicas(layout, coords);  // the communicators of each tensor's replicas
  // This rank holds its stage's layers and, under expert parallelism, its own routed experts only.
  trex::model::Model model(cfg, &dp_group, trex::dist::make_placement(cfg, layout, coords, plan));
  if (o.ep > 1)
    model.set_expert_group(&ep_group);
  else
    model.set_expert_group(&trex::model::single_process_group());  // every rank computes every expert
  model.init(o.seed);
  trex::dist::Pipeline pipeline(pp_comm, model, plan);
  MPI_Comm_free(&pp_comm);
  if (rank == 0 && o.pp > 1)
    std::fprintf(stderr, "trex dist-train: %d pipeline stages, 1F1B over %lld micro-batches: %s\n", o.pp,
                 (long long)o.micro_batches, pipeline.plan().str().c_str());

  // ZeRO-1 over each replica region (train/sharded_optimizer.hpp, the code `trex train` runs too).
  const auto regions = replicas.regions(model.store());
  trex::train::OptimizerConfig ocfg;
  ocfg.kind = trex::train::parse_optimizer(o.optimizer);
  trex::train::TensorRanges updated;
  trex::train::ShardedOptimizer optimizer(model.store(), trex::train::optimizer_slots(model, false, updated), regions,
                                          ocfg, !o.no_zero, &dp_group);
  const auto memory = trex::train::report_memory(model.store(), optimizer, &dp_group, "trex dist-train");

  // Resume from a checkpoint in the canonical layout (full weights, full optimizer moments), whatever layout
  // wrote it: every rank reads the tensors it holds and its own ZeRO slices of the moments.
  int64_t first_step = 1;
  std::optional<std::filesystem::path> last_ckpt;
  if (o.resume) {
    last_ckpt = trex::train::latest_checkpoint(o.out);
    if (!last_ckpt) throw trex::Error("--resume: " + o.out + " holds no checkpoint (no latest)");
    trex::model::load_weights(*last_ckpt, model.store());
    optimizer.load_state(*last_ckpt, model.store());
    const auto st = trex::parse_json_file(*last_ckpt / "trainer_state.json");
    first_step = st.at("step").get<int64_t>() + 1;
    optimizer.set_steps(st.at("optimizer_steps").get<int64_t>());
  }
  // Saving gathers every tensor's weights and moments from its shard owner into a canonical copy on rank 0,
  // which writes the checkpoint atomically (train_checkpoint.hpp).
  auto save = [&](int64_t step) {
    watchdog.beat("checkpoint");
    auto canon = optimizer.gather_canonical(model.store(), cfg, 0);
    if (rank == 0) {
      trex::train::CheckpointWrite w;
      w.store = canon.store ? canon.store.get() : &model.store();
      w.config = &cfg;
      w.m = canon.m;
      w.v = canon.v;
      w.state = {{"step", step}, {"optimizer_steps", optimizer.steps()}, {"layout", layout.str()},
                 {"run", {{"config", o.config}, {"seed", o.seed}, {"global_batch", o.global_batch},
                          {"seq_len", o.seq_len}, {"steps", o.steps},
                          {"micro_batches", o.micro_batches}}}};
      last_ckpt = trex::train::write_checkpoint(o.out, step, w, 2);
    }
    dp_group.barrier();  // nobody runs ahead (or dies) while rank 0 may still be writing
  };

  trex::dist::GradSync sync(regions, model, !o.no_overlap, int64_t(o.bucket_mb * 262144.0), data_ranks);
  const int64_t mb_rows = o.global_batch / o.micro_batches, local_b = mb_rows / data_ranks;
  std::vector<std::vector<int32_t>> tokens(size_t(o.micro_batches), std::vector<int32_t>(size_t(local_b * o.seq_len)));
  std::vector<trex::model::Batch> micro(size_t(o.micro_batches));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> metrics(nullptr, &std::fclose);
  if (rank == 0 && !o.metrics.empty()) {
    trex::write_file_atomic(o.metrics, "");
    metrics.reset(std::fopen(o.metrics.c_str(), "a"));
    if (!metrics) throw trex::Error("cannot open " + o.metrics + " for appending");
  }
  auto params = model.params();
  auto grads = model.grads();
  double sum_compute = 0, sum_comm = 0, sum_bubble = 0, sum_step = 0;
  double first_loss = 0, last_loss = 0;
  if (!o.out.empty() && rank == 0) {
    std::filesystem::create_directories(o.out);
    trex::train::remove_partial_checkpoints(o.out);
  }
  for (int64_t step = first_step; step <= o.steps; ++step) {
    watchdog.beat("data");
    if (rank == o.fault_rank && step == o.fault_step) {
      std::fprintf(stderr, "trex dist-train: rank %d: injected fault '%s' at step %lld\n", rank, o.fault.c_str(),
                   (long long)step);
      std::fflush(stderr);
      if (o.fault == "die") std::_Exit(13);
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    trex::Timer step_timer;
    for (int64_t a = 0; a < o.micro_batches; ++a) {
      auto& tk = tokens[size_t(a)];
      for (int64_t b = 0; b < local_b; ++b)
        make_row(o, cfg.vocab_size, step, a * mb_rows + data_index * local_b + b, tk.data() + b * o.seq_len);
      micro[size_t(a)] = {local_b, o.seq_len, tk.data(), nullptr, nullptr};
    }
    model.zero_grad();
    watchdog.beat("forward_backward");
    const trex::model::Losses l =
        pipeline.run(micro, [&] { sync.arm(); }, [&](const char* phase) { watchdog.beat(phase); });
    watchdog.beat("gradient all-reduce");
    const auto st = sync.finish();
    if (o.micro_batches > 1) model.scale_grads(float(1.0 / double(o.micro_batches)));
    trex::Timer comm_timer;
    std::vector<double> red = {l.total, l.ce};  // each stage's share (CE on the last), summed over the world
    dp_group.all_reduce_sum(red);
    for (double& x : red) x /= double(data_ranks);
    const double ep_wait = ep_group.take_wait_seconds();  // dispatch/combine time the shared expert did not hide
    const double bubble = pipeline.stats().bubble_seconds;
    double comm = comm_timer.seconds() + st.exposed_seconds + ep_wait;

    const double gnorm = optimizer.grad_norm(grads);  // every element once, over the world
    if (!std::isfinite(red[0]) || !std::isfinite(gnorm))
      throw trex::Error(fmt::format("non-finite loss {} or gradient norm {} at step {}", red[0], gnorm, step));
    watchdog.beat("optimizer");
    const double lr = trex::train::lr_at(step - 1, o.steps / 10, o.steps, o.lr, o.lr / 10);
    optimizer.update(params, grads, gnorm, o.clip, lr);
    model.update_gate_bias();  // loads summed over the data-parallel group inside
    comm += optimizer.gather_seconds();
    const double dt = step_timer.seconds();
    const double compute = dt - comm - bubble;  // forward, backward, optimizer: the rest of the step
    if (step > first_step) sum_compute += compute, sum_comm += comm, sum_bubble += bubble, sum_step += dt;
    if (step == first_step) first_loss = red[0];
    last_loss = red[0];
    if (metrics) {
      nlohmann::json rec = {{"step", step}, {"loss", red[0]}, {"lm_loss", red[1]}, {"grad_norm", gnorm},
                            {"lr", lr}, {"layout", layout.str()}, {"step_seconds", dt},
                            {"compute_seconds", compute}, {"comm_exposed_seconds", comm},
                            {"bubble_seconds", bubble}, {"buckets", st.buckets}, {"mpi_tests", st.tests},
                            {"pipeline_messages", pipeline.stats().messages}};
      if (step == first_step) rec["memory_per_rank"] = memory;  // once, at the start
      std::fprintf(metrics.get(), "%s\n", rec.dump().c_str());
      std::fflush(metrics.get());
    }
    if (!o.out.empty() && ((o.save_every > 0 && step % o.save_every == 0) || step == o.steps)) save(step);
  }
  watchdog.beat("finish");
  if (rank == 0) {
    const double share = sum_step > 0 ? sum_comm / sum_step : 0;
    std::printf("%s\n", nlohmann::json{{"layout", layout.str()},
                                       {"overlap", !o.no_overlap},
                                       {"steps", o.steps},
                                       {"first_loss", first_loss},
                                       {"last_loss", last_loss},
                                       {"warm_step_seconds",
                                        o.steps > first_step ? sum_step / double(o.steps - first_step) : 0},
                                       {"compute_seconds", sum_compute},
                                       {"comm_exposed_seconds", sum_comm},
                                       {"comm_exposed_share", share},
                                       {"bubble_seconds", sum_bubble},
                                       {"bubble_share", sum_step > 0 ? sum_bubble / sum_step : 0.0},
                                       {"stages", pipeline.plan().str()},
                                       {"memory_per_rank", memory}}
                              .dump()
                              .c_str());
  }
  return 0;
}

trex::cli::CommandRegistrar reg(
    "dist-train", "Data/expert/pipeline-parallel training on synthetic batches under MPI (equivalence/fault/bench harness)",
    [](CLI::App& sub) -> trex::cli::Action {
      auto o = std::make_shared<Opts>();
      sub.add_option("--config", o->config, "Preset or config.json (default tiny)");
      sub.add_option("--steps", o->steps, "Optimizer steps (default 50)");
      sub.add_option("--global-batch", o->global_batch, "Rows per step over all ranks (default 4)");
      sub.add_option("--seq-len", o->seq_len, "Tokens per row (default 64)");
      sub.add_option("--seed", o->seed, "Weights and data seed");
      sub.add_option("--lr", o->lr, "Peak learning rate (warm-up 10%, cosine to lr/10)");
      sub.add_option("--clip", o->clip, "Global-norm clip (<= 0: off)");
      sub.add_option("--optimizer", o->optimizer, "adamw | muon");
      sub.add_option("--dp", o->dp, "Data-parallel ranks");
      sub.add_option("--ep", o->ep, "Expert-parallel ranks (divides the routed experts)");
      sub.add_option("--pp", o->pp, "Pipeline stages (layers split by per-layer FLOPs, 1F1B schedule)");
      sub.add_option("--micro-batches", o->micro_batches,
                     "Micro-batches per step (gradient accumulation; the pipeline's scheduling unit)");
      sub.add_flag("--no-overlap", o->no_overlap,
                   "Blocking all-reduce after backward and expert exchanges completed at once (reference path)");
      sub.add_flag("--no-zero", o->no_zero, "Every rank updates all parameters (no ZeRO-1 sharding)");
      sub.add_option("--bucket-mb", o->bucket_mb, "Gradient bucket size in MiB (default 16, the MPI cliff)");
      sub.add_option("--metrics", o->metrics, "JSONL of per-step loss and timing (written by rank 0)");
      sub.add_option("--watchdog", o->watchdog_s, "Abort the job after this many seconds without progress");
      sub.add_option("--out", o->out, "Checkpoint folder (canonical layout, loadable by any layout)");
      sub.add_option("--save-every", o->save_every, "Checkpoint every N steps (0: only at the end)");
      sub.add_flag("--resume", o->resume, "Continue from OUT/latest (written by any layout)");
      sub.add_option("--fault", o->fault, "Test hook: die | hang");
      sub.add_option("--fault-rank", o->fault_rank, "Rank that faults");
      sub.add_option("--fault-step", o->fault_step, "Step at which it faults");
      return [o] { return run(*o); };
    });

}  // namespace cmd_dist_train
