// ZeRO-1 over replica regions, the global norm, and canonical checkpoint state (see sharded_optimizer.hpp).
#include "train/sharded_optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "dist/mpi_runtime.hpp"
#include "dist/zero_shards.hpp"
#include "model/safetensors.hpp"
#include "util/error.hpp"
#include "util/timer.hpp"

namespace trex::train {

ShardedOptimizer::ShardedOptimizer(const model::ParamStore& store, std::vector<TensorSlot> slots,
                                   std::vector<dist::ParamRegion> regions, OptimizerConfig cfg, bool zero,
                                   dist::MpiProcessGroup* world)
    : world_(world && world->size() > 1 ? world : nullptr), zero_(zero) {
  for (const dist::ParamRegion& r : regions) {
    Part part;
    part.region = r;
    const std::vector<model::ParamInfo> sub = dist::region_tensors(store.table(), r);
    const int ranks = r.group ? r.group->size() : 1, me = r.group ? r.group->rank() : 0;
    const dist::ShardPlan plan = dist::plan_zero_shards(sub, r.end - r.begin, ranks);
    for (int k = 0; k < ranks; ++k) {
      part.shard_begin.push_back(r.begin + plan.begin[size_t(k)]);
      part.shard_count.push_back(plan.count[size_t(k)]);
    }
    const int64_t sb = part.shard_begin[size_t(me)], se = sb + part.shard_count[size_t(me)];
    part.opt_begin = zero ? sb : r.begin;
    part.opt_count = zero ? se - sb : r.end - r.begin;
    std::vector<TensorSlot> mine;
    for (const TensorSlot& s : slots) {
      if (s.offset < r.begin || s.offset >= r.end) continue;
      if (s.offset < part.opt_begin || s.offset >= part.opt_begin + part.opt_count) continue;
      mine.push_back(s);
      mine.back().offset -= part.opt_begin;
      if (s.offset >= sb && s.offset < se) {  // this rank's shard (inside the optimizer's range)
        if (s.trainable) part.norm.emplace_back(s.offset, s.numel);
        const auto& info = store.info(s.name);
        part.owned.push_back({s.offset, info.canonical_offset, s.numel, info.canonical_index, mine.size() - 1});
      }
    }
    part.opt = std::make_unique<Optimizer>(std::move(mine), part.opt_count, cfg);
    parts_.push_back(std::move(part));
  }
}

double ShardedOptimizer::grad_norm(std::span<const float> grads) const {
  double sq = 0;
  for (const Part& p : parts_) sq += grad_sq_sum(grads, p.norm);
  if (world_) {
    std::vector<double> v{sq};
    world_->all_reduce_sum(v);
    sq = v[0];
  }
  return std::sqrt(sq);
}

double ShardedOptimizer::update(std::span<float> params, std::span<const float> grads, double norm, double clip,
                                double lr) {
  const double scale = clip_scale(norm, clip);
  gather_seconds_ = 0;
  for (Part& p : parts_) {
    // the clipping factor is applied as the optimizer reads each gradient (no pass of its own)
    p.opt->step(params.subspan(size_t(p.opt_begin), size_t(p.opt_count)),
                grads.subspan(size_t(p.opt_begin), size_t(p.opt_count)), lr, float(scale));
    if (zero_ && p.region.group) {
      Timer t;
      p.region.group->all_gather_ranges(params, p.shard_begin, p.shard_count);
      gather_seconds_ += t.seconds();
    }
  }
  return scale;
}

int64_t ShardedOptimizer::steps() const { return parts_.empty() ? 0 : parts_.front().opt->steps(); }

void ShardedOptimizer::set_steps(int64_t t) {
  for (Part& p : parts_) p.opt->set_steps(t);
}

int64_t ShardedOptimizer::state_floats() const {
  int64_t n = 0;
  for (const Part& p : parts_) n += int64_t(p.opt->state_m().size() + p.opt->state_v().size());
  return n;
}

void ShardedOptimizer::load_state(const std::filesystem::path& dir, const model::ParamStore& store) {
  auto f = model::SafetensorsFile::open(dir / "optimizer" / "optimizer.safetensors");
  for (const char* name : {"m", "v"}) {
    auto view = f.view(name);
    const size_t want = size_t(store.canonical_numel()) * sizeof(float);
    if (view.info->dtype != model::DType::F32 || view.bytes.size() != want)
      throw Error(fmt::format("{}: optimizer tensor '{}' has {} bytes, the model needs {} (different model?)",
                              f.source(), name, view.bytes.size(), want));
    const std::byte* src = view.bytes.data();
    const int which = name[0] == 'm' ? 0 : 1;
    for (Part& p : parts_) {
      const auto& ts = p.opt->tensors();
      for (size_t i = 0; i < ts.size(); ++i) {
        const std::span<float> dst = p.opt->moment(i, which);  // empty: keeps no such state
        const int64_t canon = store.info(ts[i].name).canonical_offset;
        if (!dst.empty()) std::memcpy(dst.data(), src + canon * int64_t(sizeof(float)), dst.size_bytes());
      }
    }
  }
}


namespace {

// Gathers variable-length pieces of `T` on root (MPI_Gatherv); returns the concatenation there.
template <class T>
std::vector<T> gather_pieces(const std::vector<T>& mine, dist::MpiProcessGroup* world, int root, MPI_Datatype type) {
  if (!world) return mine;
  const int n = world->size();
  long long count = (long long)mine.size();
  std::vector<long long> counts(size_t(n), 0);
  dist::check_mpi(MPI_Gather(&count, 1, MPI_LONG_LONG, counts.data(), 1, MPI_LONG_LONG, root, world->comm()),
                  "Gather");
  std::vector<int> c(size_t(n), 0), d(size_t(n), 0);
  long long total = 0;
  for (int r = 0; r < n; ++r) {
    if (counts[size_t(r)] > (1LL << 31) - 1 || total > (1LL << 31) - 1)
      throw Error("checkpoint gather: a piece exceeds 2^31 elements (too large for one MPI_Gatherv)");
    c[size_t(r)] = int(counts[size_t(r)]);
    d[size_t(r)] = int(total);
    total += counts[size_t(r)];
  }
  std::vector<T> out(world->rank() == root ? size_t(total) : 0);
  dist::check_mpi(MPI_Gatherv(mine.data(), int(mine.size()), type, out.data(), c.data(), d.data(), type, root,
                              world->comm()),
                  "Gatherv");
  return out;
}

}  // namespace

ShardedOptimizer::Canonical ShardedOptimizer::gather_canonical(const model::ParamStore& store,
                                                               const model::ModelConfig& cfg, int root) const {
  Canonical out;
  if (!world_ && !store.sharded()) {  // one process: the store is canonical; only the moments are laid out
    out.m.assign(size_t(store.canonical_numel()), 0.0f);
    out.v.assign(out.m.size(), 0.0f);
    for (const Part& p : parts_)
      for (const auto& o : p.owned)
        for (int which : {0, 1}) {
          const auto state = std::as_const(*p.opt).moment(o.tensor, which);
          std::copy(state.begin(), state.end(), (which == 0 ? out.m : out.v).begin() + o.canonical);
        }
    return out;
  }
  // Each rank sends the tensors of its shards (every tensor has exactly one such owner) with their moments (zeros
  // for state the tensor does not keep), and every hash table it holds (replicas are identical).
  CanonicalPieces pieces;
  auto params = store.params();
  for (const Part& p : parts_)
    for (const auto& o : p.owned) {
      const auto m = std::as_const(*p.opt).moment(o.tensor, 0), v = std::as_const(*p.opt).moment(o.tensor, 1);
      pieces.add_tensor(o.canonical_index, params.data() + o.local, m.empty() ? nullptr : m.data(),
                        v.empty() ? nullptr : v.data(), o.numel);
    }
  pieces.add_int_tables(store);
  return assemble_canonical(pieces, cfg, world_, root);
}

void CanonicalPieces::add_tensor(int64_t canonical_index, const float* w, const float* m, const float* v,
                                 int64_t numel) {
  index.push_back(canonical_index);
  floats.insert(floats.end(), w, w + numel);
  for (const float* state : {m, v})
    if (state)
      floats.insert(floats.end(), state, state + numel);
    else
      floats.insert(floats.end(), size_t(numel), 0.0f);
}

void CanonicalPieces::add_int_tables(const model::ParamStore& store) {
  for (const auto& p : store.int_table()) {
    int_index.push_back(p.canonical_index);
    ints.insert(ints.end(), store.int_params().begin() + p.offset, store.int_params().begin() + p.offset + p.numel);
  }
}

ShardedOptimizer::Canonical assemble_canonical(const CanonicalPieces& mine, const model::ModelConfig& cfg,
                                               dist::MpiProcessGroup* world, int root) {
  ShardedOptimizer::Canonical out;
  if (world && world->size() == 1) world = nullptr;
  const auto all_index = gather_pieces(mine.index, world, root, MPI_INT64_T);
  const auto all_floats = gather_pieces(mine.floats, world, root, MPI_FLOAT);
  const auto all_int_index = gather_pieces(mine.int_index, world, root, MPI_INT64_T);
  const auto all_ints = gather_pieces(mine.ints, world, root, MPI_INT64_T);
  if (world && world->rank() != root) return out;
  out.store = std::make_unique<model::ParamStore>(cfg, model::ParamPlacement{}, /*with_grads=*/false);
  const auto& table = out.store->canonical_table();
  out.m.assign(size_t(out.store->canonical_numel()), 0.0f);
  out.v.assign(out.m.size(), 0.0f);
  std::vector<char> seen(table.size(), 0);
  size_t k = 0;
  auto dst = out.store->params();
  for (int64_t ci : all_index) {
    if (ci < 0 || size_t(ci) >= table.size() || seen[size_t(ci)])
      throw Error("internal: checkpoint gather received tensor " + std::to_string(ci) + " twice or out of range");
    seen[size_t(ci)] = 1;
    const auto& t = table[size_t(ci)];
    std::copy_n(all_floats.begin() + int64_t(k), t.numel, dst.begin() + t.offset);
    std::copy_n(all_floats.begin() + int64_t(k) + t.numel, t.numel, out.m.begin() + t.offset);
    std::copy_n(all_floats.begin() + int64_t(k) + 2 * t.numel, t.numel, out.v.begin() + t.offset);
    k += size_t(3 * t.numel);
  }
  for (size_t i = 0; i < table.size(); ++i)
    if (!seen[i]) throw Error("internal: checkpoint gather: no rank sent tensor " + table[i].name);
  const auto& itable = out.store->canonical_int_table();
  k = 0;
  for (int64_t ci : all_int_index) {
    const auto& t = itable.at(size_t(ci));
    std::copy_n(all_ints.begin() + int64_t(k), t.numel, out.store->int_params().begin() + t.offset);
    k += size_t(t.numel);
  }
  return out;
}

nlohmann::json report_memory(const model::ParamStore& store, const ShardedOptimizer& opt,
                             dist::MpiProcessGroup* world, const char* who) {
  const int n = world ? world->size() : 1, me = world ? world->rank() : 0;
  std::vector<double> all(size_t(3 * n), 0.0);
  all[size_t(3 * me)] = double(store.params().size()) * 4;
  all[size_t(3 * me + 1)] = double(store.grads().size()) * 4;
  all[size_t(3 * me + 2)] = double(opt.state_floats()) * 4;
  if (world) world->all_reduce_sum(all);
  nlohmann::json out = nlohmann::json::array();
  for (int r = 0; r < n; ++r) {
    const auto p = int64_t(all[size_t(3 * r)]), g = int64_t(all[size_t(3 * r + 1)]), o = int64_t(all[size_t(3 * r + 2)]);
    out.push_back({{"rank", r}, {"param_bytes", p}, {"grad_bytes", g}, {"optimizer_bytes", o}, {"total_bytes", p + g + o}});
    if (me == 0)
      std::fprintf(stderr, "%s: rank %d holds %.2f MiB (parameters %.2f + gradients %.2f + optimizer state %.2f)\n",
                   who, r, double(p + g + o) / 1048576.0, double(p) / 1048576.0, double(g) / 1048576.0,
                   double(o) / 1048576.0);
  }
  return out;
}

}  // namespace trex::train
