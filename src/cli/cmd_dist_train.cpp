// `trex dist-train`: data-parallel training of a preset on deterministic synthetic batches under MPI
// (mpirun -np N trex dist-train --dp N ...). It exercises the distributed pieces end to end — MPI process
// group, bucketed all-reduce overlapped with backward, ZeRO-1 sharded optimizer, globally reduced routing
// statistics, watchdog — and is what the equivalence, fault and bench runs use: for a fixed global batch every
// layout must give the same loss curve. Rank 0 writes one JSON line per step with the timing breakdown.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "dist/grad_sync.hpp"
#include "dist/layout.hpp"
#include "dist/mpi_process_group.hpp"
#include "dist/mpi_runtime.hpp"
#include "dist/watchdog.hpp"
#include "dist/zero_shards.hpp"
#include "model/config.hpp"
#include "model/model.hpp"
#include "model/model_info.hpp"
#include "train/optimizer.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"
#include "util/timer.hpp"

namespace {

struct Opts {
  std::string config = "tiny";
  int64_t steps = 50, global_batch = 4, seq_len = 64;
  uint64_t seed = 1234;
  double lr = 3e-4, clip = 1.0;
  std::string optimizer = "adamw";
  int dp = 1, ep = 1, pp = 1;
  bool no_overlap = false, no_zero = false;
  double bucket_mb = 16;
  std::string metrics;
  double watchdog_s = 60;
  std::string fault;  // die | hang
  int fault_rank = -1;
  int64_t fault_step = 0;
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
  if (o.ep != 1 || o.pp != 1)
    throw trex::Error(fmt::format("layout {}: expert and pipeline parallelism are not implemented yet in "
                                  "trex dist-train (only --dp)", layout.str()));
  if (o.global_batch % o.dp != 0)
    throw trex::Error(fmt::format("--global-batch {} is not divisible by --dp {}", o.global_batch, o.dp));
  if (o.steps < 1 || o.seq_len < 2) throw trex::Error("--steps must be >= 1 and --seq-len >= 2");
  if (o.fault != "" && o.fault != "die" && o.fault != "hang")
    throw trex::Error("--fault must be die or hang (got '" + o.fault + "')");

  trex::dist::Watchdog watchdog(o.watchdog_s);
  trex::dist::MpiProcessGroup dp_group(MPI_COMM_WORLD);
  const int rank = dp_group.rank();
  const auto cfg = trex::model::load_model_config(o.config);
  trex::model::Model model(cfg, &dp_group);
  model.set_expert_group(&trex::model::single_process_group());  // every rank holds every expert (--ep 1)
  model.init(o.seed);

  // ZeRO-1: this rank's optimizer covers its shard only (offsets rebased to the shard start).
  const auto shards = o.no_zero ? trex::dist::ShardPlan{std::vector<int64_t>(size_t(o.dp), 0),
                                                       std::vector<int64_t>(size_t(o.dp), int64_t(model.params().size()))}
                                : trex::dist::plan_zero_shards(model.param_table(), int64_t(model.params().size()), o.dp);
  const int64_t sb = shards.begin[size_t(rank)], sc = shards.count[size_t(rank)];
  std::vector<trex::train::TensorSlot> slots;
  std::vector<std::pair<int64_t, int64_t>> trainable;
  for (const auto& p : model.param_table()) {
    if (p.trainable) trainable.emplace_back(p.offset, p.numel);
    if (p.offset < sb || p.offset >= sb + sc) continue;
    trex::train::TensorSlot s;
    s.name = p.name;
    s.offset = p.offset - sb;
    s.numel = p.numel;
    s.ndim = int(p.shape.size());
    s.rows = p.shape.empty() ? 1 : p.shape[0];
    s.cols = s.rows > 0 ? p.numel / s.rows : 1;
    s.trainable = p.trainable;
    slots.push_back(std::move(s));
  }
  trex::train::OptimizerConfig ocfg;
  ocfg.kind = trex::train::parse_optimizer(o.optimizer);
  trex::train::Optimizer optimizer(std::move(slots), sc, ocfg);

  trex::dist::GradSync sync(dp_group, model, !o.no_overlap, int64_t(o.bucket_mb * 262144.0));
  const int64_t local_b = o.global_batch / o.dp;
  std::vector<int32_t> tokens(size_t(local_b * o.seq_len));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> metrics(nullptr, &std::fclose);
  if (rank == 0 && !o.metrics.empty()) {
    trex::write_file_atomic(o.metrics, "");
    metrics.reset(std::fopen(o.metrics.c_str(), "a"));
    if (!metrics) throw trex::Error("cannot open " + o.metrics + " for appending");
  }
  auto params = model.params();
  auto grads = model.grads();
  double sum_compute = 0, sum_comm = 0, sum_step = 0;
  double first_loss = 0, last_loss = 0;
  for (int64_t step = 1; step <= o.steps; ++step) {
    watchdog.beat("data");
    if (rank == o.fault_rank && step == o.fault_step) {
      std::fprintf(stderr, "trex dist-train: rank %d: injected fault '%s' at step %lld\n", rank, o.fault.c_str(),
                   (long long)step);
      std::fflush(stderr);
      if (o.fault == "die") std::_Exit(13);
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    trex::Timer step_timer;
    for (int64_t b = 0; b < local_b; ++b)
      make_row(o, cfg.vocab_size, step, rank * local_b + b, tokens.data() + b * o.seq_len);
    model.zero_grad();
    sync.arm();
    watchdog.beat("forward_backward");
    trex::Timer fb_timer;
    const trex::model::Losses l = model.forward_backward({local_b, o.seq_len, tokens.data(), nullptr, nullptr});
    const double fb = fb_timer.seconds();
    watchdog.beat("gradient all-reduce");
    const auto st = sync.finish();
    trex::Timer comm_timer;
    std::vector<double> red = {l.total, l.ce};
    dp_group.all_reduce_sum(red);
    for (double& x : red) x /= double(o.dp);
    double comm = comm_timer.seconds() + st.exposed_seconds;

    double sq = 0;
    for (auto [off, n] : trainable)
      for (int64_t i = off; i < off + n; ++i) sq += double(grads[size_t(i)]) * double(grads[size_t(i)]);
    const double gnorm = std::sqrt(sq);
    if (!std::isfinite(red[0]) || !std::isfinite(gnorm))
      throw trex::Error(fmt::format("non-finite loss {} or gradient norm {} at step {}", red[0], gnorm, step));
    if (o.clip > 0 && gnorm > o.clip) {
      const float s = float(o.clip / gnorm);
      for (float& g : grads) g *= s;
    }
    watchdog.beat("optimizer");
    trex::Timer opt_timer;
    const double lr = trex::train::lr_at(step - 1, o.steps / 10, o.steps, o.lr, o.lr / 10);
    optimizer.step(params.subspan(size_t(sb), size_t(sc)), grads.subspan(size_t(sb), size_t(sc)), lr);
    const double opt_s = opt_timer.seconds();
    trex::Timer gather_timer;
    if (!o.no_zero) dp_group.all_gather_ranges(params, shards.begin, shards.count);
    model.update_gate_bias();  // loads summed over the data-parallel group inside
    comm += gather_timer.seconds();
    const double dt = step_timer.seconds();
    const double compute = fb - st.exposed_seconds + opt_s;
    if (step > 1) sum_compute += compute, sum_comm += comm, sum_step += dt;
    if (step == 1) first_loss = red[0];
    last_loss = red[0];
    if (metrics) {
      nlohmann::json rec = {{"step", step}, {"loss", red[0]}, {"lm_loss", red[1]}, {"grad_norm", gnorm},
                            {"lr", lr}, {"layout", layout.str()}, {"step_seconds", dt},
                            {"compute_seconds", compute}, {"comm_exposed_seconds", comm},
                            {"bubble_seconds", 0.0}, {"buckets", st.buckets}, {"mpi_tests", st.tests}};
      std::fprintf(metrics.get(), "%s\n", rec.dump().c_str());
      std::fflush(metrics.get());
    }
  }
  watchdog.beat("finish");
  if (rank == 0) {
    const double share = sum_step > 0 ? sum_comm / sum_step : 0;
    std::printf("%s\n", nlohmann::json{{"layout", layout.str()},
                                       {"overlap", !o.no_overlap},
                                       {"steps", o.steps},
                                       {"first_loss", first_loss},
                                       {"last_loss", last_loss},
                                       {"warm_step_seconds", o.steps > 1 ? sum_step / double(o.steps - 1) : 0},
                                       {"compute_seconds", sum_compute},
                                       {"comm_exposed_seconds", sum_comm},
                                       {"comm_exposed_share", share}}
                              .dump()
                              .c_str());
  }
  return 0;
}

trex::cli::CommandRegistrar reg(
    "dist-train", "Data-parallel training on synthetic batches under MPI (equivalence/fault/bench harness)",
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
      sub.add_option("--ep", o->ep, "Expert-parallel ranks (must be 1 for now)");
      sub.add_option("--pp", o->pp, "Pipeline stages (must be 1 for now)");
      sub.add_flag("--no-overlap", o->no_overlap, "Blocking all-reduce after backward (reference path)");
      sub.add_flag("--no-zero", o->no_zero, "Every rank updates all parameters (no ZeRO-1 sharding)");
      sub.add_option("--bucket-mb", o->bucket_mb, "Gradient bucket size in MiB (default 16, the MPI cliff)");
      sub.add_option("--metrics", o->metrics, "JSONL of per-step loss and timing (written by rank 0)");
      sub.add_option("--watchdog", o->watchdog_s, "Abort the job after this many seconds without progress");
      sub.add_option("--fault", o->fault, "Test hook: die | hang");
      sub.add_option("--fault-rank", o->fault_rank, "Rank that faults");
      sub.add_option("--fault-step", o->fault_step, "Step at which it faults");
      return [o] { return run(*o); };
    });

}  // namespace
