// Bucketed, overlapped data-parallel gradient all-reduce (see grad_sync.hpp).
#include "dist/grad_sync.hpp"

#include <algorithm>
#include <string>

#include "dist/mpi_runtime.hpp"
#include "util/error.hpp"
#include "util/timer.hpp"

namespace trex::dist {

namespace {

// Backward event after which a tensor's gradient is final.
int ready_event(const std::string& name, int64_t n_layers) {
  if (name.rfind("layers.", 0) == 0) {
    const int64_t l = std::stoll(name.substr(7, name.find('.', 7) - 7));
    return int(n_layers - 1 - l);
  }
  if (name.rfind("embed.", 0) == 0) return int(n_layers);  // touched by the MTP module and at the very end
  return 0;  // MTP module, head, final norm, hc_head: done before block L-1's backward ends
}

}  // namespace

std::vector<GradBucket> plan_grad_buckets(const std::vector<model::ParamInfo>& table, int64_t n_layers,
                                          int64_t total, int64_t max_floats) {
  if (max_floats < 1) throw Error("plan_grad_buckets: bucket size must be positive");
  // Per float position: the event of the tensor covering it (gaps belong to no tensor: event of the previous).
  std::vector<std::pair<int64_t, int>> starts;  // (offset, event) sorted by offset
  for (const auto& p : table) starts.emplace_back(p.offset, ready_event(p.name, n_layers));
  std::sort(starts.begin(), starts.end());
  std::vector<GradBucket> out;
  int64_t pos = 0;
  size_t i = 0;
  int cur = starts.empty() ? int(n_layers) : starts[0].second;
  while (pos < total) {
    // Extent of the run of tensors with the same event starting at pos.
    while (i < starts.size() && starts[i].first <= pos) cur = starts[i++].second;
    int64_t run_end = total;
    for (size_t j = i; j < starts.size(); ++j)
      if (starts[j].second != cur) {
        run_end = starts[j].first;
        break;
      }
    for (int64_t b = pos; b < run_end; b += max_floats) out.push_back({b, std::min(run_end, b + max_floats), cur});
    pos = run_end;
    while (i < starts.size() && starts[i].first < pos) ++i;
  }
  std::stable_sort(out.begin(), out.end(), [](const GradBucket& a, const GradBucket& b) { return a.event < b.event; });
  return out;
}

GradSync::GradSync(MpiProcessGroup& pg, model::Model& model, bool overlap, int64_t max_bucket_floats,
                   int average_over)
    : GradSync({ParamRegion{0, int64_t(model.grads().size()), &pg, 0}}, model, overlap, max_bucket_floats,
               average_over > 0 ? average_over : pg.size()) {}

GradSync::GradSync(const std::vector<ParamRegion>& regions, model::Model& model, bool overlap,
                   int64_t max_bucket_floats, int average_over)
    : model_(model), overlap_(overlap), average_over_(std::max(average_over, 1)) {
  for (const ParamRegion& r : regions) {
    const std::vector<model::ParamInfo> sub = region_tensors(model.param_table(), r);
    const MPI_Comm comm = r.group && r.group->size() > 1 ? r.group->comm() : MPI_COMM_NULL;
    any_comm_ = any_comm_ || comm != MPI_COMM_NULL;
    for (GradBucket b : plan_grad_buckets(sub, model.config().num_hidden_layers, r.end - r.begin, max_bucket_floats)) {
      b.begin += r.begin;
      b.end += r.begin;
      b.comm = comm;
      if (comm != MPI_COMM_NULL) buckets_.push_back(b);
    }
  }
  std::stable_sort(buckets_.begin(), buckets_.end(),
                   [](const GradBucket& a, const GradBucket& b) { return a.event < b.event; });
  requests_.assign(buckets_.size(), MPI_REQUEST_NULL);
}

GradSync::~GradSync() { model_.set_backward_hook({}); }

void GradSync::arm() {
  next_ = 0;
  stats_ = {};
  armed_ = overlap_ && any_comm_;
  if (armed_)
    model_.set_backward_hook([this](int64_t block) { on_block_done(block); });
  else
    model_.set_backward_hook({});
}

void GradSync::start_ready(int event) {
  float* g = model_.grads().data();
  while (next_ < buckets_.size() && buckets_[next_].event <= event) {
    const GradBucket& b = buckets_[next_];
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, g + b.begin, int(b.end - b.begin), MPI_FLOAT, MPI_SUM, b.comm,
                             &requests_[next_]),
              "Iallreduce");
    ++next_;
    ++stats_.buckets;
  }
}

void GradSync::progress() {
  for (size_t k = 0; k < next_; ++k)
    if (requests_[k] != MPI_REQUEST_NULL) {
      int done = 0;
      check_mpi(MPI_Test(&requests_[k], &done, MPI_STATUS_IGNORE), "Test");
      ++stats_.tests;
    }
}

void GradSync::on_block_done(int64_t block) {
  Timer t;
  const int64_t L = model_.config().num_hidden_layers;
  if (block < L) start_ready(int(L - 1 - block));  // MTP blocks (>= L) only drive progress
  progress();
  stats_.exposed_seconds += t.seconds();
}

GradSyncStats GradSync::finish() {
  Timer t;
  model_.set_backward_hook({});
  if (any_comm_) {
    if (armed_) {
      start_ready(1 << 30);
      check_mpi(MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "Waitall");
    } else {
      float* g = model_.grads().data();
      for (const auto& b : buckets_) {
        check_mpi(MPI_Allreduce(MPI_IN_PLACE, g + b.begin, int(b.end - b.begin), MPI_FLOAT, MPI_SUM, b.comm),
                  "Allreduce");
        ++stats_.buckets;
      }
    }
  }
  if (average_over_ > 1) model_.scale_grads(1.0f / float(average_over_));
  armed_ = false;
  stats_.exposed_seconds += t.seconds();
  return stats_;
}

}  // namespace trex::dist
