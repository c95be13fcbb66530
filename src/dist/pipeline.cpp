// 1F1B pipeline stage (see pipeline.hpp).
#include "dist/pipeline.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "dist/mpi_runtime.hpp"
#include "util/error.hpp"
#include "util/timer.hpp"

namespace trex::dist {

Pipeline::Pipeline(MPI_Comm comm, model::StageModel& model, StagePlan plan) : model_(model), plan_(std::move(plan)) {
  check_mpi(MPI_Comm_dup(comm, &comm_), "Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "Comm_set_errhandler");
  int size = 0;
  MPI_Comm_rank(comm_, &stage_);
  MPI_Comm_size(comm_, &size);
  if (size != plan_.stages())
    throw Error(fmt::format("pipeline: {} ranks in the pipeline but the plan has {} stages", size, plan_.stages()));
  if (plan_.first.back() != model.config().num_hidden_layers)
    throw Error("pipeline: the stage plan does not cover the model's layers");
}

Pipeline::~Pipeline() {
  for (auto* v : {&fwd_send_, &bwd_send_})
    for (auto& r : *v)
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);  // only on an error path: every run() completes them
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::vector<int64_t> Pipeline::schedule(int stage, int stages, int64_t micro) {
  const int64_t warm = std::min<int64_t>(stages - stage - 1, micro);
  std::vector<int64_t> ops;
  for (int64_t i = 0; i < warm; ++i) ops.push_back(i);
  for (int64_t i = 0; i < micro - warm; ++i) {
    ops.push_back(warm + i);
    ops.push_back(-(i + 1));
  }
  for (int64_t i = micro - warm; i < micro; ++i) ops.push_back(-(i + 1));
  return ops;
}

void Pipeline::recv(float* buf, int64_t n, int peer, int tag) {
  Timer t;
  check_mpi(MPI_Recv(buf, int(n), MPI_FLOAT, peer, tag, comm_, MPI_STATUS_IGNORE), "Recv (pipeline)");
  stats_.bubble_seconds += t.seconds();
  ++stats_.messages;
}

void Pipeline::wait_send(size_t slot) {
  for (auto* v : {&fwd_send_, &bwd_send_}) {
    MPI_Request& r = (*v)[slot];
    if (r == MPI_REQUEST_NULL) continue;
    Timer t;
    check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE), "Wait (pipeline send)");
    stats_.bubble_seconds += t.seconds();
  }
}

model::Losses Pipeline::run(std::span<const model::Batch> micro, const std::function<void()>& before_last_backward,
                            const std::function<void(const char*)>& beat) {
  stats_ = {};
  const int64_t M = int64_t(micro.size());
  if (M < 1) throw Error("pipeline: no micro-batch");
  const int S = stages();
  const int64_t warm = std::min<int64_t>(S - stage_ - 1, M);
  const size_t slots = size_t(warm + 1);  // micro-batches in flight on this stage at most
  fwd_send_.assign(std::max(slots, fwd_send_.size()), MPI_REQUEST_NULL);
  bwd_send_.assign(fwd_send_.size(), MPI_REQUEST_NULL);
  const auto& cfg = model_.config();
  const int64_t l0 = first_layer(), l1 = end_layer();
  model::Losses sum;
  const double inv = 1.0 / double(M);
  for (const int64_t op : schedule(stage_, S, M)) {
    const bool fwd = op >= 0;
    const int64_t i = fwd ? op : -op - 1;
    const size_t slot = size_t(i) % slots;
    const model::Batch& b = micro[size_t(i)];
    const int64_t n = b.B * b.T * cfg.hc_mult * cfg.hidden_size;
    const int tag = int(2 * i + (fwd ? 0 : 1));
    if (fwd) {
      wait_send(slot);  // the slot's previous micro-batch's messages left its memory
      const float* input = nullptr;
      if (stage_ > 0) {
        beat("pipeline: receiving activations");
        in_.resize(size_t(n));
        recv(in_.data(), n, stage_ - 1, tag);
        input = in_.data();
      }
      beat("pipeline: forward");
      Timer t;
      const model::Losses l = model_.stage_forward(int(slot), b, l0, l1, input);
      stats_.compute_seconds += t.seconds();
      sum.add_weighted(l, inv);
      if (stage_ + 1 < S) {
        auto out = model_.stage_output(int(slot));
        check_mpi(MPI_Isend(out.data(), int(out.size()), MPI_FLOAT, stage_ + 1, tag, comm_, &fwd_send_[slot]),
                  "Isend (pipeline activations)");
        ++stats_.messages;
      }
    } else {
      const float* grad = nullptr;
      if (stage_ + 1 < S) {
        beat("pipeline: receiving gradients");
        grad_in_.resize(size_t(n));
        recv(grad_in_.data(), n, stage_ + 1, tag);
        grad = grad_in_.data();
      }
      if (i + 1 == M && before_last_backward) before_last_backward();
      beat("pipeline: backward");
      Timer t;
      auto dx = model_.stage_backward(int(slot), grad);
      stats_.compute_seconds += t.seconds();
      if (stage_ > 0) {
        check_mpi(MPI_Isend(dx.data(), int(dx.size()), MPI_FLOAT, stage_ - 1, tag, comm_, &bwd_send_[slot]),
                  "Isend (pipeline gradients)");
        ++stats_.messages;
      }
    }
  }
  for (size_t s = 0; s < fwd_send_.size(); ++s) wait_send(s);
  return sum;
}

}  // namespace trex::dist
