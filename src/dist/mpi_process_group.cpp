// MpiProcessGroup (see mpi_process_group.hpp).
#include "dist/mpi_process_group.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "dist/mpi_runtime.hpp"
#include "util/error.hpp"

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

void MpiProcessGroup::all_to_all_rows(const float* send, std::span<const int64_t> send_counts, float* recv,
                                      std::span<const int64_t> recv_counts, int64_t row_len) {
  if (int(send_counts.size()) != size_ || int(recv_counts.size()) != size_)
    throw Error(fmt::format("MpiProcessGroup::all_to_all_rows: {} send / {} recv counts for {} ranks",
                            send_counts.size(), recv_counts.size(), size_));
  scounts_.assign(size_t(size_), 0);
  sdispls_.assign(size_t(size_), 0);
  rcounts_.assign(size_t(size_), 0);
  rdispls_.assign(size_t(size_), 0);
  int64_t so = 0, ro = 0;
  for (int r = 0; r < size_; ++r) {
    scounts_[size_t(r)] = to_int(send_counts[size_t(r)] * row_len, "send count");
    sdispls_[size_t(r)] = to_int(so, "send offset");
    so += send_counts[size_t(r)] * row_len;
    rcounts_[size_t(r)] = to_int(recv_counts[size_t(r)] * row_len, "recv count");
    rdispls_[size_t(r)] = to_int(ro, "recv offset");
    ro += recv_counts[size_t(r)] * row_len;
  }
  if (send == recv) {  // the model dispatches in place
    staging_.assign(send, send + so);
    send = staging_.data();
  }
  check_mpi(MPI_Alltoallv(send, scounts_.data(), sdispls_.data(), MPI_FLOAT, recv, rcounts_.data(),
                          rdispls_.data(), MPI_FLOAT, comm_),
            "Alltoallv");
}

void MpiProcessGroup::all_to_all_counts(std::span<const int64_t> send_counts, std::span<int64_t> recv_counts) {
  if (int(send_counts.size()) != size_ || int(recv_counts.size()) != size_)
    throw Error("MpiProcessGroup::all_to_all_counts: one count per rank expected");
  check_mpi(MPI_Alltoall(send_counts.data(), 1, MPI_INT64_T, recv_counts.data(), 1, MPI_INT64_T, comm_),
            "Alltoall");
}

void MpiProcessGroup::all_gather_ranges(std::span<float> data, std::span<const int64_t> displs,
                                        std::span<const int64_t> counts) {
  if (size_ == 1) return;
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
