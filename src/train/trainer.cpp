// The training loop (see trainer.hpp).
#include "train/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include "dist/grad_sync.hpp"
#include "dist/layout.hpp"
#include "dist/model_shards.hpp"
#include "dist/mpi_process_group.hpp"
#include "dist/mpi_runtime.hpp"
#include "dist/pipeline.hpp"
#include "dist/watchdog.hpp"
#include "model/checkpoint.hpp"
#include "nn/gemm_bf16.hpp"
#include "model/config.hpp"
#include "model/model.hpp"
#include "model/model_info.hpp"
#include "text/data_loader.hpp"
#include "text/datasets.hpp"
#include "text/tokenizer.hpp"
#include "train/sharded_optimizer.hpp"
#include "train/spike_guard.hpp"
#include "train/train_step.hpp"
#include "train/train_checkpoint.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/progress.hpp"
#include "util/timer.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace trex::train {

namespace {

// CPU time of the whole process (every thread), seconds.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// Options that must not change across a resume (they change the loss sequence).
json run_identity(const TrainOptions& o, int64_t seq_len, const std::string& tokenizer_sha, uint64_t sequences) {
  return {{"mode", o.mode},
          {"optimizer", o.optimizer},
          {"micro_batch", o.micro_batch},
          {"grad_accum", o.grad_accum},
          {"seq_len", seq_len},
          {"seed", o.seed},
          {"freeze_router", o.freeze_router},
          {"indexer_warmup", o.indexer_warmup},
          {"matmul", o.matmul},
          {"data_tokenizer_sha256", tokenizer_sha},
          {"data_sequences", sequences}};
}

struct LoadStats {
  double max_ratio = 0;                 // max over blocks of max load / mean load
  std::vector<double> per_block;        // max / mean per MoE block
};

template <class M>  // model::Model or DeviceStep
LoadStats expert_load_stats(const M& m) {
  LoadStats s;
  for (int64_t b = 0; b < m.n_moe_blocks(); ++b) {
    auto load = m.expert_load(b);
    double total = 0, mx = 0;
    for (int64_t x : load) {
      total += double(x);
      mx = std::max(mx, double(x));
    }
    double r = total > 0 ? mx / (total / double(load.size())) : 0;
    s.per_block.push_back(r);
    s.max_ratio = std::max(s.max_ratio, r);
  }
  return s;
}

// Keeps the metrics lines of steps <= `step` (a resumed run continues the file where its checkpoint was).
void truncate_metrics(const fs::path& path, int64_t step) {
  if (!fs::exists(path)) return;
  std::ifstream in(path);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) break;  // a torn last line from a kill
    if (j.value("step", int64_t(0)) <= step) kept += line + "\n";
  }
  write_file_atomic(path, kept);
}

// The MPI side of a distributed run (TrainOptions::dp/ep/pp).
struct Distributed {
  dist::MpiRuntime mpi{nullptr, nullptr};
  std::unique_ptr<dist::MpiProcessGroup> data, experts;  // data: the world (gradients, losses, routing stats)
  std::unique_ptr<dist::Watchdog> watchdog;
  std::unique_ptr<dist::ReplicaGroups> replicas;  // the communicators of each tensor's replicas
  dist::Layout layout;
  dist::RankCoords coords;
  std::unique_ptr<dist::Pipeline> pipeline;  // this rank's stage (pp = 1: one stage, plain accumulation)
  MPI_Comm pp_comm = MPI_COMM_NULL;          // the ranks of this rank's pipeline, in stage order
  int rank = 0, data_ranks = 1, data_index = 0;  // data_index: which slice of each micro-batch this rank takes
  ~Distributed() {
    pipeline.reset();
    if (pp_comm != MPI_COMM_NULL) MPI_Comm_free(&pp_comm);
  }
  void beat(const char* phase) {
    if (watchdog) watchdog->beat(phase);
  }
};

}  // namespace

void validate_options(const TrainOptions& o) {
  if (o.mode != "cpt" && o.mode != "sft") throw Error("--mode must be cpt or sft (got '" + o.mode + "')");
  if (o.data.empty()) throw Error("--data is required");
  const char* manifest = o.mode == "cpt" ? "cpt.json" : "sft.json";
  if (!fs::is_directory(o.data))
    throw Error(fmt::format("--data {}: not a folder (expected a packed folder with {}; see trex data pack)",
                            o.data.string(), manifest));
  if (!fs::exists(o.data / manifest))
    throw Error(fmt::format("--data {}: no {} in it (--mode {} needs data packed with trex data pack --mode {})",
                            o.data.string(), manifest, o.mode, o.mode));
  if (o.out.empty()) throw Error("--out is required");
  if (o.mode == "sft" && o.init.empty() && !o.resume) throw Error("--mode sft needs --init CKPT (the CPT checkpoint)");
  if (!o.init.empty() && !fs::exists(o.init)) throw Error("--init " + o.init.string() + ": no such file or folder");
  if (o.steps < 1) throw Error("--steps must be >= 1");
  if (!(o.lr > 0) || !std::isfinite(o.lr)) throw Error("--lr must be a positive number");
  if (o.min_lr > o.lr) throw Error("--min-lr must not exceed --lr");
  if (o.micro_batch < 1) throw Error("--micro-batch must be >= 1");
  if (o.grad_accum < 1) throw Error("--grad-accum must be >= 1");
  if (o.seq_len < 0 || (o.seq_len > 0 && o.seq_len < 2)) throw Error("--seq-len must be >= 2");
  if (o.save_every < 0) throw Error("--save-every must be >= 0");
  if (o.keep < 1) throw Error("--keep must be >= 1");
  if (!(o.peak_gflops > 0)) throw Error("--peak-gflops must be positive");
  if (o.weight_decay < 0) throw Error("--weight-decay must be >= 0");
  if (o.dp < 1 || o.ep < 1 || o.pp < 1) throw Error("--dp/--ep/--pp must be >= 1");
  if (o.micro_batch % (o.dp * o.ep) != 0)
    throw Error(fmt::format("--micro-batch {} is not divisible by dp*ep = {} (every data rank takes an equal "
                            "slice of each micro-batch)", o.micro_batch, o.dp * o.ep));
  parse_optimizer(o.optimizer);
  if (o.matmul != "fp32" && o.matmul != "bf16") throw Error("--matmul must be fp32 or bf16, not '" + o.matmul + "'");
  if (o.matmul == "bf16" && !o.device_step && !nn::bf16_matmul_supported())
    throw Error("--matmul bf16: this CPU lacks AVX512_BF16 (use --matmul fp32)");
}

static json train_impl(const TrainOptions& opt, Distributed* D);

namespace {

// Every rank's device memory record (collective over world): under --ep the ranks hold different tensors.
json device_memory_per_rank(const DeviceStep& dev, dist::MpiProcessGroup& world) {
  static constexpr const char* kFields[] = {"param_bytes", "grad_bytes", "optimizer_bytes", "activation_bytes",
                                            "total_bytes"};
  constexpr size_t nf = std::size(kFields);
  const json mine = dev.memory();
  std::vector<double> all(nf * size_t(world.size()), 0.0);
  for (size_t f = 0; f < nf; ++f) all[nf * size_t(world.rank()) + f] = mine.at(kFields[f]).get<double>();
  world.all_reduce_sum(std::span<double>(all));
  json out = json::array();
  for (int r = 0; r < world.size(); ++r) {
    json rec = {{"rank", r}, {"device", mine.at("device")}};
    for (size_t f = 0; f < nf; ++f) rec[kFields[f]] = int64_t(all[nf * size_t(r) + f]);
    out.push_back(std::move(rec));
  }
  return out;
}

// This rank's share of a checkpoint from a multi-process device step: the tensors of its checkpoint ranges (its
// ZeRO-1 shards: each tensor of the job from one rank), with their moments (m, v in host()'s layout), and its hash
// tables.
CanonicalPieces device_checkpoint_pieces(const model::ParamStore& store, const std::vector<float>& m,
                                         const std::vector<float>& v, const TensorRanges& ranges) {
  CanonicalPieces pieces;
  for (const auto& [begin, n] : ranges)
    for (const model::ParamInfo& t : store.table())
      if (t.offset >= begin && t.offset < begin + n)
        pieces.add_tensor(t.canonical_index, store.params().data() + t.offset, m.data() + t.offset,
                          v.data() + t.offset, t.numel);
  pieces.add_int_tables(store);
  return pieces;
}

}  // namespace

json train(const TrainOptions& opt) {
  validate_options(opt);
  if (opt.dp * opt.ep * opt.pp == 1) return train_impl(opt, nullptr);
  Distributed D;
  const dist::Layout layout{opt.dp, opt.ep, opt.pp};
  dist::validate_layout(layout, D.mpi.world_size());
  D.data = std::make_unique<dist::MpiProcessGroup>(MPI_COMM_WORLD);
  D.rank = D.data->rank();
  D.data_ranks = opt.dp * opt.ep;
  const auto c = dist::coords_of(layout, D.rank);
  MPI_Comm ep_comm = MPI_COMM_NULL;
  dist::check_mpi(MPI_Comm_split(MPI_COMM_WORLD, c.pp * opt.dp + c.dp, c.ep, &ep_comm), "Comm_split");
  D.experts = std::make_unique<dist::MpiProcessGroup>(ep_comm);
  MPI_Comm_free(&ep_comm);
  dist::check_mpi(MPI_Comm_split(MPI_COMM_WORLD, c.dp * opt.ep + c.ep, c.pp, &D.pp_comm), "Comm_split");
  D.data_index = c.dp * opt.ep + c.ep;
  D.layout = layout;
  D.coords = c;
  D.replicas = std::make_unique<dist::ReplicaGroups>(layout, c);
  D.watchdog = std::make_unique<dist::Watchdog>(opt.watchdog_s);
  try {
    return train_impl(opt, &D);
  } catch (const std::exception& e) {  // the peers would block in their next collective: end the whole job
    dist::abort_job(e.what(), 2);
  }
}

static json train_impl(const TrainOptions& opt, Distributed* D) {
  const bool lead = !D || D->rank == 0;  // writes metrics, checkpoints, the summary
  TrainOptions o = opt;
  const double min_lr = o.min_lr >= 0 ? o.min_lr : o.lr / 10;
  const int64_t warmup = std::min(o.steps, o.warmup >= 0 ? o.warmup : o.steps / 10);

  // --- resume point, configuration, data (all read before anything is written) ---
  std::optional<fs::path> resume_dir;
  if (fs::exists(o.out / "latest")) {
    if (!o.resume)
      throw Error(fmt::format("--out {} already holds a checkpoint ({}); pass --resume to continue it or choose "
                              "another --out", o.out.string(), read_file(o.out / "latest").substr(0, 14)));
    resume_dir = latest_checkpoint(o.out);
  }
  json saved_state;
  if (resume_dir) saved_state = parse_json_file(*resume_dir / "trainer_state.json");

  model::ModelConfig cfg = resume_dir ? model::ModelConfig::from_hf_json(*resume_dir / "config.json")
                           : !o.init.empty() && o.config.empty()
                               ? model::load_model_config((fs::is_directory(o.init) ? o.init : o.init.parent_path()).string())
                               : model::load_model_config(o.config.empty() ? std::string("tiny") : o.config);

  cfg.indexer_dense_warmup = o.indexer_warmup;  // a run option, not a property of the weights
  if (o.indexer_warmup) {
    bool has_csa = false;
    for (int64_t l = 0; l < cfg.num_hidden_layers + cfg.num_nextn_predict_layers; ++l)
      has_csa = has_csa || cfg.kind(l) == model::AttnKind::CSA;
    if (!has_csa) throw Error("--indexer-warmup: the model has no CSA layer (no lightning indexer to train)");
  }

  const int64_t cpt_seq = o.seq_len > 0 ? o.seq_len : 256;
  auto dataset = text::open_dataset(o.data, size_t(cpt_seq));
  const int64_t T = int64_t(dataset->seq_len());
  if (o.mode == "sft" && o.seq_len > 0 && o.seq_len != T)
    throw Error(fmt::format("--seq-len {} differs from the SFT data's packed length {} ({})", o.seq_len, T,
                            o.data.string()));
  if (dataset->size() == 0)
    throw Error(fmt::format("--data {}: no training sequence of {} tokens in it", o.data.string(), T));
  json identity = run_identity(o, T, dataset->tokenizer_sha256(), dataset->size());
  if (resume_dir) {
    const json& was = saved_state.at("run");
    for (auto& [k, v] : identity.items())
      if (was.value(k, k == "matmul" ? json("fp32") : json()) != v)  // checkpoints from before --matmul: fp32
        throw Error(fmt::format("--resume: option '{}' was {} in {}, now {} (a resumed run must use the same "
                                "setting)", k, was.value(k, json()).dump(), resume_dir->string(), v.dump()));
  }

  // Threads: one pool, OpenMP's (OMP_NUM_THREADS, default all cores). The model drives OpenBLAS single-threaded
  // and spreads its GEMMs over the OpenMP threads itself (nn/gemm.hpp): two pools spinning on 2 cores fight.


  // Mixed precision: every GEMM of this run takes bf16 operands (fp32 accumulation) while the scope lives.
  std::optional<nn::Bf16MatmulScope> bf16_matmul;
  if (o.matmul == "bf16" && !o.device_step) bf16_matmul.emplace();

  // --- model, optimizer, loader ---
  if (D && cfg.n_routed_experts % o.ep != 0)
    throw Error(fmt::format("--ep {} does not divide the model's {} routed experts", o.ep, cfg.n_routed_experts));
  // Distributed: this rank holds its pipeline stage's layers and (ep > 1) its own routed experts only.
  const dist::StagePlan stage_plan = dist::plan_stages(cfg, T, o.pp);
  OptimizerConfig ocfg;
  ocfg.kind = parse_optimizer(o.optimizer);
  ocfg.weight_decay = o.weight_decay;
  // On a device (--device cuda): its model and optimizer (device_step.hpp); the CPU model is not built at all.
  std::unique_ptr<DeviceStep> dev;
  std::optional<model::Model> cpu_model;
  if (o.device_step) {
    DeviceStepConfig dc;
    dc.model = cfg;
    dc.optimizer = ocfg;
    dc.freeze_router = o.freeze_router;
    dc.indexer_only = o.indexer_warmup;
    dc.matmul = o.matmul;
    dc.data_group = D ? D->data.get() : nullptr;
    dc.zero = D != nullptr;  // ZeRO-1 under MPI, as the CPU branch's ShardedOptimizer
    if (D && (o.ep > 1 || o.pp > 1)) {  // this rank's stage and experts; each replica region averaged over its replicas
      dc.placement = dist::make_placement(cfg, D->layout, D->coords, stage_plan);
      dc.expert_group = D->experts.get();
      dc.data_ranks = D->data_ranks;
      dc.gradient_regions = [replicas = D->replicas.get()](const model::ParamStore& st) {
        std::vector<GradientRegion> out;
        for (const dist::ParamRegion& r : replicas->regions(st)) out.push_back({r.begin, r.end, r.group});
        return out;
      };
    }
    if (D && o.pp > 1) {  // the step's micro-batches through this rank's stage, 1F1B (dist/pipeline.hpp)
      dc.first_layer = stage_plan.first[size_t(D->coords.pp)];
      dc.end_layer = stage_plan.first[size_t(D->coords.pp) + 1];
      dc.run_stages = [D, &stage_plan](model::StageModel& stage, std::span<const model::Batch> micro) {
        if (!D->pipeline) D->pipeline = std::make_unique<dist::Pipeline>(D->pp_comm, stage, stage_plan);
        return D->pipeline->run(micro, {}, [D](const char* phase) { D->beat(phase); });
      };
    }
    dev = o.device_step(dc);
  } else {
    cpu_model.emplace(cfg, D ? D->data.get() : nullptr,  // routing statistics summed over the data ranks
                      D ? dist::make_placement(cfg, D->layout, D->coords, stage_plan) : model::ParamPlacement{});
  }
  model::ParamStore& store = dev ? dev->host() : cpu_model->store();
  if (D && cpu_model) {
    if (o.ep > 1)
      cpu_model->set_expert_group(D->experts.get());
    else
      cpu_model->set_expert_group(&model::single_process_group());
  }
  // Each replica region's gradients are summed over its replicas and averaged over the dp*ep data ranks.
  const std::vector<dist::ParamRegion> regions =
      D ? D->replicas->regions(store)
        : std::vector<dist::ParamRegion>{{0, int64_t(store.params().size()), nullptr, dist::kStageGroup}};
  std::unique_ptr<dist::GradSync> sync;
  if (D && cpu_model) sync = std::make_unique<dist::GradSync>(regions, *cpu_model, true, dist::kMaxMessageFloats, D->data_ranks);
  if (resume_dir) {
    model::load_weights(*resume_dir, store);
  } else if (!o.init.empty()) {
    // A transformers folder has no MTP module: its tensors keep this seed's initialisation.
    model::init_params(store, cfg, o.seed);
    const model::LoadReport rep = model::load_weights(o.init, store);
    if (rep.mtp_absent && lead) std::fprintf(stderr, "--init %s: %s\n", o.init.c_str(), rep.summary().c_str());
  } else {
    model::init_params(store, cfg, o.seed);
  }
  if (dev) dev->upload();
  // The tokenizer the data was packed with (--tokenizer, else one found in the --init folder, --out or the two above it):
  // checkpoints then carry it (with its chat template) and are Hugging Face model folders (docs/huggingface.md).
  fs::path ckpt_tokenizer;
  if (!o.tokenizer.empty()) {
    const std::string sha = text::Tokenizer::load(o.tokenizer).fingerprint();  // throws naming the file
    if (sha != dataset->tokenizer_sha256())
      throw Error("--tokenizer " + o.tokenizer.string() + " is not the tokenizer " + o.data.string() +
                  " was packed with (fingerprint " + sha + ", the data's " + dataset->tokenizer_sha256() + ")");
    ckpt_tokenizer = o.tokenizer;
  } else {
    std::vector<fs::path> cands;
    if (!o.init.empty()) cands.push_back((fs::is_directory(o.init) ? o.init : o.init.parent_path()) / "tokenizer.json");
    cands.push_back(o.out / "tokenizer.json");
    cands.push_back(o.out.parent_path() / "tokenizer.json");
    cands.push_back(o.out.parent_path().parent_path() / "tokenizer.json");  // trex run: RUN/train/<route>
    for (const fs::path& c : cands) {
      std::error_code ec;
      if (!fs::is_regular_file(c, ec)) continue;
      try {
        if (text::Tokenizer::load(c).fingerprint() == dataset->tokenizer_sha256()) {
          ckpt_tokenizer = c;
          break;
        }
      } catch (const Error&) {
      }
    }
  }

  TensorRanges norm_ranges;  // the tensors the optimizer updates
  const std::vector<TensorSlot> slots = optimizer_slots(store.table(), o.freeze_router, norm_ranges, o.indexer_warmup);
  // ZeRO-1 under MPI: each rank keeps optimizer state for its shard of every replica region (sharded_optimizer.hpp).
  std::optional<ShardedOptimizer> optimizer;
  json memory;
  if (dev) {  // each rank's own: under MPI the ranks hold different shards of the optimizer state (ZeRO-1)
    memory = D ? device_memory_per_rank(*dev, *D->data) : json::array({dev->memory()});
    if (lead)
      std::fprintf(stderr, "trex train: %s holds %.2f MiB (parameters %.2f + gradients %.2f + optimizer state %.2f + "
                   "activations %.2f)\n", dev->describe().c_str(), memory[0]["total_bytes"].get<double>() / 1048576.0,
                   memory[0]["param_bytes"].get<double>() / 1048576.0, memory[0]["grad_bytes"].get<double>() / 1048576.0,
                   memory[0]["optimizer_bytes"].get<double>() / 1048576.0,
                   memory[0]["activation_bytes"].get<double>() / 1048576.0);
  } else {
    optimizer.emplace(store, slots, regions, ocfg, /*zero=*/true, D ? D->data.get() : nullptr);
    memory = report_memory(store, *optimizer, D ? D->data.get() : nullptr, "trex train");
  }
  auto optimizer_steps = [&] { return dev ? dev->optimizer_steps() : optimizer->steps(); };

  text::LoaderConfig lcfg;
  lcfg.batch_size = size_t(o.micro_batch);
  lcfg.seed = o.seed;
  text::DataLoader loader(*dataset, lcfg);
  SpikeGuard guard({o.spike_window, o.spike_min_samples, o.spike_z});

  int64_t done = 0;  // completed optimizer steps (skipped ones included)
  double tokens_seen = 0, elapsed_before = 0;
  if (resume_dir) {
    done = saved_state.at("step").get<int64_t>();
    const int64_t t = saved_state.at("optimizer_steps").get<int64_t>();
    if (dev) {
      std::vector<float> m(size_t(store.canonical_numel())), v(m.size());
      load_optimizer_state(*resume_dir, m, v);
      if (store.sharded()) {  // --ep / --pp: this rank's tensors of the canonical moments
        std::vector<float> lm(store.params().size()), lv(lm.size());
        for (const model::ParamInfo& t : store.table()) {
          std::copy_n(m.begin() + t.canonical_offset, t.numel, lm.begin() + t.offset);
          std::copy_n(v.begin() + t.canonical_offset, t.numel, lv.begin() + t.offset);
        }
        m = std::move(lm);
        v = std::move(lv);
      }
      dev->set_state(m, v);
      dev->set_optimizer_steps(t);
    } else {
      optimizer->load_state(*resume_dir, store);
      optimizer->set_steps(t);
    }
    loader.restore(text::LoaderState::from_json(saved_state.at("loader")));
    guard.from_json(saved_state.at("spike_guard"));
    tokens_seen = saved_state.value("tokens_seen", 0.0);
    elapsed_before = saved_state.value("train_seconds", 0.0);
  }

  // --- output folder (first write; rank 0 only) ---
  const fs::path metrics_path = o.out / "metrics.jsonl";
  if (lead) {
    fs::create_directories(o.out);
    remove_partial_checkpoints(o.out);
    if (resume_dir)
      truncate_metrics(metrics_path, done);
    else
      write_file_atomic(metrics_path, "");
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> metrics(std::fopen(lead ? metrics_path.c_str() : "/dev/null", "a"),
                                                         &std::fclose);
  if (!metrics) throw Error("cannot open " + metrics_path.string() + " for appending");

  // --- FLOP convention, printed once ---
  const auto fpt = model::flops_per_token(cfg, T, /*with_mtp=*/true);
  const int64_t tokens_per_step = o.micro_batch * o.grad_accum * T;
  if (D && cpu_model) D->pipeline = std::make_unique<dist::Pipeline>(D->pp_comm, *cpu_model, stage_plan);
  if (D && lead && o.pp > 1)
    std::fprintf(stderr, "pipeline: %d stages balanced by forward FLOPs, 1F1B over %lld micro-batches: %s\n", o.pp,
                 (long long)o.grad_accum, stage_plan.str().c_str());
  if (lead)
    std::fprintf(stderr,
               "trex train: %s, %lld parameters, mode %s, optimizer %s%s, matmul %s, %lld x %lld x %lld tokens per step\n"
               "FLOPs: train = 3 x forward, forward = 2*N_mm + attention + indexer (DEEPSEEK_V4.md §10, MTP "
               "included, S = %lld, padding counted) = %.2f MFLOP/token; MFU peak %.0f GFLOP/s (%s)\n",
               o.config.empty() ? "config from checkpoint" : o.config.c_str(), (long long)store.canonical_numel(),
               o.mode.c_str(), o.optimizer.c_str(), o.freeze_router ? ", router frozen" : "",
               o.matmul == "bf16" ? "bf16 (fp32 accumulation)" : "fp32", (long long)o.micro_batch, (long long)o.grad_accum, (long long)T, (long long)T, fpt.train / 1e6,
               o.peak_gflops, dev ? "the device's, --peak-gflops" : "FP32");
  if (resume_dir && lead) std::fprintf(stderr, "resuming from %s (step %lld)\n", resume_dir->c_str(), (long long)done);
  if (D && lead)
    std::fprintf(stderr, "layout dp%d ep%d pp%d: %d ranks, %lld rows of each micro-batch per rank\n", o.dp, o.ep,
                 o.pp, D->mpi.world_size(), (long long)(o.micro_batch / D->data_ranks));

  auto state_json = [&](double train_seconds) {
    return json{{"step", done},
                {"optimizer_steps", optimizer_steps()},
                {"loader", loader.state().to_json()},
                {"spike_guard", guard.to_json()},
                {"tokens_seen", tokens_seen},
                {"train_seconds", train_seconds},
                {"run", identity},
                {"schedule", {{"steps", o.steps}, {"lr", o.lr}, {"min_lr", min_lr}, {"warmup", warmup}}},
                {"rng", {{"note", "the data order is the only randomness: loader seed + step"}, {"seed", o.seed}}}};
  };
  std::optional<fs::path> last_ckpt = resume_dir;
  auto save = [&](double train_seconds) {
    if (D) D->beat("checkpoint");
    // Sharded: every tensor's weights and moments travel from its shard owner to a canonical copy on rank 0. On a
    // device: its weights into the host copy and its moments in the canonical layout.
    ShardedOptimizer::Canonical canon;
    if (dev && D) {  // each rank holds its shards' moments (and under --ep / --pp its stage, its experts): every
      dev->download();  // rank's share travels to the writer
      std::vector<float> m, v;
      dev->get_state(m, v);
      canon = assemble_canonical(device_checkpoint_pieces(store, m, v, dev->checkpoint_ranges()), cfg,
                                 D->data.get(), 0);
    } else if (dev) {  // one process: its state is the checkpoint
      dev->download();
      dev->get_state(canon.m, canon.v);
    } else {
      canon = optimizer->gather_canonical(store, cfg, 0);
    }
    if (!lead) {
      D->data->barrier();  // rank 0 writes; nobody runs ahead while it does
      return;
    }
    CheckpointWrite w;
    w.store = canon.store ? canon.store.get() : &store;
    w.config = &cfg;
    w.m = canon.m;
    w.v = canon.v;
    w.state = state_json(train_seconds);
    w.pause_ms = o.checkpoint_pause_ms;
    w.tokenizer = ckpt_tokenizer;
    last_ckpt = write_checkpoint(o.out, done, w, o.keep);
    if (D) D->data->barrier();
  };

  // --- the step loop: nothing large is allocated here (model arena, loader batch, optimizer state reused) ---
  std::vector<text::Batch> micro(size_t(o.grad_accum));
  std::vector<model::Batch> views(micro.size()), parts(micro.size());
  const std::span<float> grads = cpu_model ? cpu_model->grads() : std::span<float>{};
  ProgressBar bar("train", o.steps, o.progress && lead);
  bar.update(done);
  const bool plain_log = o.progress && lead && !ProgressBar::on_terminal();
  const int64_t log_every = std::max<int64_t>(1, o.steps / 20);
  double first_loss = std::numeric_limits<double>::quiet_NaN(), last_loss = first_loss;
  double timed_seconds = 0, timed_tokens = 0;  // steps after the first of this process (warm-up excluded)
  double timed_cpu = 0;  // process CPU seconds of those steps (all threads): less sensitive to a shared machine's load
  int64_t timed_steps = 0;
  Timer run_timer;
  const int64_t first_step_of_process = done;

  while (done < o.steps) {
    Timer step_timer;
    const double cpu_at_start = process_cpu_seconds();
    const int64_t step = done + 1;
    for (auto& mb : micro) {
      loader.next(mb);
      for (size_t i = 0; i < mb.tokens.size(); ++i)
        if (mb.tokens[i] < 0 || mb.tokens[i] >= cfg.vocab_size)
          throw Error(fmt::format("--data {}: sequence {} holds token id {} outside the model's vocabulary "
                                  "(vocab_size {})", o.data.string(), mb.sequence_index[i / size_t(T)],
                                  mb.tokens[i], cfg.vocab_size));
    }
    for (size_t a = 0; a < micro.size(); ++a)
      views[a] = model::Batch{int64_t(micro[a].batch_size), T, micro[a].tokens.data(), micro[a].doc_ids.data(),
                              micro[a].loss_mask.data()};
    model::Losses sum;
    double comm_s = 0, compute_s = 0, bubble_s = 0;
    if (!D) {
      sum = dev ? dev->accumulate(views) : accumulate_gradients(*cpu_model, views);
    } else {
      // This rank's slice of every micro-batch, normalised by the whole micro-batch's target counts (so the
      // average over ranks is the one-process mean); the bucketed all-reduce overlaps the last backward.
      if (cpu_model) cpu_model->zero_grad();
      const int64_t rows = o.micro_batch / D->data_ranks, first = D->data_index * rows;
      const double inv = 1.0 / double(views.size());
      for (size_t a = 0; a < views.size(); ++a) {
        model::Batch full = views[a], part = full;
        part.B = rows;
        part.tokens += first * T;
        if (part.doc_ids) part.doc_ids += first * T;
        if (part.loss_mask) part.loss_mask += first * T;
        part.ce_denominator = double(model::count_targets(full, 1, T)) / double(D->data_ranks);
        part.mtp_denominator = double(model::count_targets(full, 2, T - 1)) / double(D->data_ranks);
        parts[a] = part;
      }
      D->beat("forward_backward");
      dist::GradSyncStats st;
      Timer dev_t;
      if (dev) {
        // A replica (under --ep: its experts; --pp: its stage, 1F1B) per rank on its device: the micro-batches,
        // then the gradients averaged over the ranks (staged through the host, not overlapped: counted as compute).
        sum = dev->accumulate(parts);
        compute_s = dev_t.seconds();
      } else {
        // The micro-batches through this rank's stage (1F1B; one stage: forward_backward of each in turn).
        sum = D->pipeline->run(parts, [&] { sync->arm(); }, [&](const char* phase) { D->beat(phase); });
        D->beat("gradient all-reduce");
        st = sync->finish();
        if (views.size() > 1) cpu_model->scale_grads(float(inv));
      }
      Timer red_t;
      std::vector<double> red = {sum.total, sum.ce, sum.mtp, sum.balance, sum.indexer};  // per-stage shares
      D->data->all_reduce_sum(red);
      for (double& x : red) x /= double(D->data_ranks);
      sum.total = red[0], sum.ce = red[1], sum.mtp = red[2], sum.balance = red[3], sum.indexer = red[4];
      const double ep_wait = D->experts->take_wait_seconds();
      comm_s = st.exposed_seconds + ep_wait + red_t.seconds();
      if (D->pipeline) {
        bubble_s = D->pipeline->stats().bubble_seconds;
        compute_s = D->pipeline->stats().compute_seconds - ep_wait;
      }
      D->beat("optimizer");
    }
    if (step == o.inject_nan_step) {
      if (dev)
        dev->poison_gradient(norm_ranges.front().first);
      else
        grads[size_t(norm_ranges.front().first)] = std::numeric_limits<float>::quiet_NaN();
    }

    const double gnorm = dev ? dev->grad_norm() : optimizer->grad_norm(grads);  // each element once, over the world
    if (!std::isfinite(sum.total) || !std::isfinite(gnorm)) {
      std::string msg = fmt::format(
          "non-finite {} at step {} (loss {}, grad norm {}): stopped before updating the weights; last "
          "checkpoint: {}",
          std::isfinite(sum.total) ? "gradient" : "loss", step, sum.total, gnorm,
          last_ckpt ? last_ckpt->string() : std::string("none written yet"));
      std::fprintf(metrics.get(), "%s\n", json{{"step", step}, {"error", msg}}.dump().c_str());
      std::fflush(metrics.get());
      bar.finish();
      throw Error(msg);
    }

    const double lr = lr_at(step - 1, warmup, o.steps, o.lr, min_lr);
    SpikeVerdict verdict = guard.check(sum.total, gnorm);
    double clip_scale = 1;
    if (!verdict.skip) {
      clip_scale = dev ? dev->update(gnorm, o.clip, lr) : optimizer->update(store.params(), grads, gnorm, o.clip, lr);
      if (!o.freeze_router && !o.indexer_warmup) {
        if (dev)
          dev->update_gate_bias();
        else
          cpu_model->update_gate_bias();
      }
    }
    done = step;
    tokens_seen += double(tokens_per_step);
    const double dt = step_timer.seconds();
    const double cpu_dt = process_cpu_seconds() - cpu_at_start;
    if (step > first_step_of_process + 1) {
      timed_seconds += dt;
      timed_tokens += double(tokens_per_step);
      timed_cpu += cpu_dt;
      ++timed_steps;
    }
    const double tok_s = double(tokens_per_step) / dt;
    const double tflops = fpt.train * tok_s / 1e12;
    const double mfu = fpt.train * tok_s / (o.peak_gflops * 1e9);
    LoadStats ls = dev ? expert_load_stats(*dev) : expert_load_stats(*cpu_model);
    if (std::isnan(first_loss)) first_loss = sum.total;
    last_loss = sum.total;

    json rec = {{"step", step},        {"loss", sum.total},     {"lm_loss", sum.ce},   {"mtp_loss", sum.mtp},
                {"indexer_loss", sum.indexer}, {"balance_loss", sum.balance}, {"grad_norm", gnorm},
                {"clip_scale", clip_scale},    {"lr", lr},   {"skipped", verdict.skip},
                {"tokens", tokens_per_step},   {"step_seconds", dt}, {"cpu_seconds", cpu_dt},
                {"tokens_per_s", tok_s},
                {"tflops", tflops},            {"mfu", mfu}, {"expert_load_max_mean", ls.max_ratio},
                {"expert_load_max_mean_per_block", ls.per_block}};
    if (verdict.skip) rec["skip_reason"] = verdict.reason;
    if (step == first_step_of_process + 1) rec["memory_per_rank"] = memory;  // once per process, at its start
    if (D) {  // step decomposition: compute (the optimizer and the rest included) + exposed comm + bubble = step
      rec["layout"] = fmt::format("dp{} ep{} pp{}", o.dp, o.ep, o.pp);
      rec["compute_seconds"] = dt - comm_s - bubble_s;
      rec["forward_backward_compute_seconds"] = compute_s;
      rec["comm_exposed_seconds"] = comm_s;
      rec["bubble_seconds"] = bubble_s;
    }
    std::fprintf(metrics.get(), "%s\n", rec.dump().c_str());
    std::fflush(metrics.get());

    std::string line = fmt::format("loss {:.4f} lm {:.4f} gn {:.3f} lr {:.2e} {:.0f} tok/s {:.1f}% MFU load {:.2f}{}",
                                   sum.total, sum.ce, gnorm, lr, tok_s, 100 * mfu, ls.max_ratio,
                                   guard.skipped() ? fmt::format(" skipped {}", guard.skipped()) : "");
    bar.update(step, line);
    if (plain_log && (step % log_every == 0 || step == o.steps || verdict.skip))
      std::fprintf(stderr, "step %lld/%lld %s%s\n", (long long)step, (long long)o.steps, line.c_str(),
                   verdict.skip ? (" SKIPPED: " + verdict.reason).c_str() : "");

    if ((o.save_every > 0 && step % o.save_every == 0) || step == o.steps)
      save(elapsed_before + run_timer.seconds());
  }
  bar.finish();

  const double tok_s = timed_seconds > 0 ? timed_tokens / timed_seconds : 0;
  json summary = {{"steps", done},
                  {"first_loss", first_loss},
                  {"last_loss", last_loss},
                  {"skipped_steps", guard.skipped()},
                  {"tokens_seen", tokens_seen},
                  {"tokens_per_s", tok_s},
                  {"cpu_seconds_per_step", timed_steps > 0 ? timed_cpu / double(timed_steps) : 0.0},
                  {"tflops", fpt.train * tok_s / 1e12},
                  {"mfu", fpt.train * tok_s / (o.peak_gflops * 1e9)},
                  {"flops_per_token", fpt.train},
                  {"peak_gflops", o.peak_gflops},
                  {"matmul", o.matmul},
                  {"checkpoint", last_ckpt ? last_ckpt->string() : ""},
                  {"memory_per_rank", memory},
                  {"metrics", metrics_path.string()}};
  if (!lead) return summary;
  if (o.json)
    std::printf("%s\n", summary.dump(2).c_str());
  else
    std::printf("trained %lld steps: loss %.4f -> %.4f, %.0f tok/s (warm steps), %.1f%% MFU of %.0f GFLOP/s, "
                "%lld skipped; checkpoint %s\n",
                (long long)done, first_loss, last_loss, tok_s, 100 * summary["mfu"].get<double>(), o.peak_gflops,
                (long long)guard.skipped(), summary["checkpoint"].get<std::string>().c_str());
  return summary;
}

}  // namespace trex::train
