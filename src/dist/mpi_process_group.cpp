// MpiProcessGroup (see mpi_process_group.hpp).
#include "dist/mpi_process_group.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "dist/mpi_runtime.hpp"
#include "util/error.hpp"
#include "util/timer.hpp"

namespace trex::dist {

MpiProcessGroup::MpiProcessGroup(MPI_Comm comm) {
  check_mpi(MPI_Comm_dup(comm, &comm_), "Comm_dup");
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "Comm_size");
}

MpiProcessGroup::~MpiProcessGroup() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiProcessGroup::all_reduce_sum(std::span<float> data) {
  if (size_ == 1) return;
  for (size_t at = 0; at < data.size(); at += size_t(kMaxMessageFloats)) {
    const int n = int(std::min<size_t>(size_t(kMaxMessageFloats), data.size() - at));
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, data.data() + at, n, MPI_FLOAT, MPI_SUM, comm_), "Allreduce");
  }
}

void MpiProcessGroup::all_reduce_sum(std::span<double> data) {
  if (size_ == 1) return;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, data.data(), int(data.size()), MPI_DOUBLE, MPI_SUM, comm_), "Allreduce");
}

static int to_int(int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX) throw Error(fmt::format("MPI: {} {} does not fit an MPI count", what, v));
  return int(v);
}

void MpiProcessGroup::fill_counts(std::span<const int64_t> send_counts, std::span<const int64_t> recv_counts,
                                  int64_t row_len, std::vector<int>& sc, std::vector<int>& sd, std::vector<int>& rc,
                                  std::vector<int>& rd) {
  if (int(send_counts.size()) != size_ || int(recv_counts.size()) != size_)
    throw Error(fmt::format("MpiProcessGroup::all_to_all_rows: {} send / {} recv counts for {} ranks",
                            send_counts.size(), recv_counts.size(), size_));
  sc.assign(size_t(size_), 0);
  sd.assign(size_t(size_), 0);
  rc.assign(size_t(size_), 0);
  rd.assign(size_t(size_), 0);
  int64_t so = 0, ro = 0;
  for (int r = 0; r < size_; ++r) {
    sc[size_t(r)] = to_int(send_counts[size_t(r)] * row_len, "send count");
    sd[size_t(r)] = to_int(so, "send offset");
    so += send_counts[size_t(r)] * row_len;
    rc[size_t(r)] = to_int(recv_counts[size_t(r)] * row_len, "recv count");
    rd[size_t(r)] = to_int(ro, "recv offset");
    ro += recv_counts[size_t(r)] * row_len;
  }
}

void MpiProcessGroup::all_to_all_rows(const float* send, std::span<const int64_t> send_counts, float* recv,
                                      std::span<const int64_t> recv_counts, int64_t row_len) {
  fill_counts(send_counts, recv_counts, row_len, scounts_, sdispls_, rcounts_, rdispls_);
  if (send == recv) {  // the model dispatches in place
    int64_t total = 0;
    for (auto c : send_counts) total += c * row_len;
    staging_.assign(send, send + total);
    send = staging_.data();
  }
  Timer t;
  check_mpi(MPI_Alltoallv(send, scounts_.data(), sdispls_.data(), MPI_FLOAT, recv, rcounts_.data(),
                          rdispls_.data(), MPI_FLOAT, comm_),
            "Alltoallv");
  wait_seconds_ += t.seconds();
}

int MpiProcessGroup::start_all_to_all_rows(const float* send, std::span<const int64_t> send_counts, float* recv,
                                           std::span<const int64_t> recv_counts, int64_t row_len) {
  size_t slot = 0;
  while (slot < pending_.size() && !pending_[slot].requests.empty()) ++slot;
  if (slot == pending_.size()) pending_.emplace_back();
  Pending& p = pending_[slot];
  fill_counts(send_counts, recv_counts, row_len, p.scounts, p.sdispls, p.rcounts, p.rdispls);
  // every rank starts the same exchanges in the same order, so the sequence number is a common tag
  const int tag = 1000 + (tag_++ % 30000);
  p.requests.reserve(size_t(2 * size_));
  for (int r = 0; r < size_; ++r) {
    const size_t q = size_t(r);
    if (r == rank_) {
      if (p.scounts[q] != p.rcounts[q]) throw Error("MpiProcessGroup: own block sizes differ");
      if (p.scounts[q] > 0)
        std::memcpy(recv + p.rdispls[q], send + p.sdispls[q], size_t(p.scounts[q]) * sizeof(float));
      continue;
    }
    if (p.rcounts[q] > 0) {
      p.requests.push_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Irecv(recv + p.rdispls[q], p.rcounts[q], MPI_FLOAT, r, tag, comm_, &p.requests.back()), "Irecv");
    }
    if (p.scounts[q] > 0) {
      p.requests.push_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Isend(send + p.sdispls[q], p.scounts[q], MPI_FLOAT, r, tag, comm_, &p.requests.back()), "Isend");
    }
  }
  if (p.requests.empty()) return -1;  // nothing to wait for
  if (!overlap_) {
    wait(int(slot));
    return -1;
  }
  return int(slot);
}

void MpiProcessGroup::progress() {
  for (auto& p : pending_)
    if (!p.requests.empty()) {
      int done = 0;
      check_mpi(MPI_Testall(int(p.requests.size()), p.requests.data(), &done, MPI_STATUSES_IGNORE), "Testall");
    }
}

void MpiProcessGroup::wait(int handle) {
  if (handle < 0) return;
  if (size_t(handle) >= pending_.size()) throw Error(fmt::format("MpiProcessGroup::wait: no exchange {}", handle));
  Pending& p = pending_[size_t(handle)];
  Timer t;
  check_mpi(MPI_Waitall(int(p.requests.size()), p.requests.data(), MPI_STATUSES_IGNORE), "Waitall");
  p.requests.clear();
  wait_seconds_ += t.seconds();
}

double MpiProcessGroup::take_wait_seconds() {
  const double s = wait_seconds_;
  wait_seconds_ = 0;
  return s;
}

void MpiProcessGroup::all_to_all_counts(std::span<const int64_t> send_counts, std::span<int64_t> recv_counts) {
  if (send_counts.size() != recv_counts.size() || send_counts.size() % size_t(size_) != 0)
    throw Error("MpiProcessGroup::all_to_all_counts: the same number of counts per rank expected");
  const int k = int(send_counts.size() / size_t(size_));
  Timer t;
  check_mpi(MPI_Alltoall(send_counts.data(), k, MPI_INT64_T, recv_counts.data(), k, MPI_INT64_T, comm_),
            "Alltoall");
  wait_seconds_ += t.seconds();
}

void MpiProcessGroup::all_gather_ranges(std::span<float> data, std::span<const int64_t> displs,
                                        std::span<const int64_t> counts) {
  if (size_ == 1) return;
  if (int(displs.size()) != size_ || int(counts.size()) != size_)
    throw Error(fmt::format("MpiProcessGroup::all_gather_ranges: {} offsets / {} counts for {} ranks", displs.size(),
                            counts.size(), size_));
  int64_t span = 0;
  for (int r = 0; r < size_; ++r) {
    if (displs[size_t(r)] < 0 || counts[size_t(r)] < 0 || displs[size_t(r)] + counts[size_t(r)] > int64_t(data.size()))
      throw Error(fmt::format("MpiProcessGroup::all_gather_ranges: rank {}'s range [{}, +{}) outside the {} floats",
                              r, displs[size_t(r)], counts[size_t(r)], data.size()));
    span = std::max(span, displs[size_t(r)] + counts[size_t(r)]);
  }
  if (span > gather_span_floats_) {
    // MPI_Allgatherv's counts and offsets are ints: past them, each owner's range is broadcast in pieces
    const int64_t piece = std::min<int64_t>(kMaxMessageFloats, gather_span_floats_);
    for (int r = 0; r < size_; ++r)
      for (int64_t at = 0; at < counts[size_t(r)]; at += piece)
        check_mpi(MPI_Bcast(data.data() + displs[size_t(r)] + at, int(std::min(piece, counts[size_t(r)] - at)),
                            MPI_FLOAT, r, comm_),
                  "Bcast");
    return;
  }
  rcounts_.assign(size_t(size_), 0);
  rdispls_.assign(size_t(size_), 0);
  for (int r = 0; r < size_; ++r) {
    rcounts_[size_t(r)] = to_int(counts[size_t(r)], "gather count");
    rdispls_[size_t(r)] = to_int(displs[size_t(r)], "gather offset");
  }
  check_mpi(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_FLOAT, data.data(), rcounts_.data(), rdispls_.data(), MPI_FLOAT,
                           comm_),
            "Allgatherv");
}

void MpiProcessGroup::barrier() { check_mpi(MPI_Barrier(comm_), "Barrier"); }

}  // namespace trex::dist
