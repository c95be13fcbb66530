// MpiProcessGroup: model::ProcessGroup over an MPI communicator (duplicated, errors returned as trex::Error).
// all_reduce_sum works in pieces of at most 16 MiB (MACHINE.md §4: larger Open MPI allreduces fall off a cliff);
// all-to-all goes through MPI_Alltoallv.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "model/process_group.hpp"

namespace trex::dist {

inline constexpr int64_t kMaxMessageFloats = int64_t(16) << 18;  // 16 MiB of fp32

class MpiProcessGroup final : public model::ProcessGroup {
 public:
  explicit MpiProcessGroup(MPI_Comm comm);  // duplicates comm
  ~MpiProcessGroup() override;
  MpiProcessGroup(const MpiProcessGroup&) = delete;
  MpiProcessGroup& operator=(const MpiProcessGroup&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  MPI_Comm comm() const { return comm_; }

  void all_reduce_sum(std::span<float> data) override;
  void all_reduce_sum(std::span<double> data) override;
  void all_to_all_rows(const float* send, std::span<const int64_t> send_counts, float* recv,
                       std::span<const int64_t> recv_counts, int64_t row_len) override;
  void all_to_all_counts(std::span<const int64_t> send_counts, std::span<int64_t> recv_counts) override;
  int start_all_to_all_rows(const float* send, std::span<const int64_t> send_counts, float* recv,
                            std::span<const int64_t> recv_counts, int64_t row_len) override;
  void progress() override;  // MPI_Test on every exchange in flight
  void wait(int handle) override;
  // One in-place MPI_Allgatherv while the ranges end within gather_span_floats (MPI's int offsets), else each
  // owner's range broadcast in pieces of at most kMaxMessageFloats.
  void all_gather_ranges(std::span<float> data, std::span<const int64_t> displs,
                         std::span<const int64_t> counts) override;
  void set_gather_span_floats(int64_t n) { gather_span_floats_ = std::max<int64_t>(1, n); }  // tests: the pieces
  void barrier();

  // false: start_all_to_all_rows completes the exchange before returning (nothing overlaps; the reference
  // against which the overlap's benefit is measured).
  void set_overlap(bool on) { overlap_ = on; }

  // Seconds spent blocked in this group's all-to-all calls and waits (communication the computation did not
  // hide) since the last call; resets the counter.
  double take_wait_seconds();

 private:
  // One nonblocking exchange: point-to-point MPI_Isend/MPI_Irecv per peer (Open MPI 4.1's MPI_Ialltoallv hung
  // here when mixed with blocking collectives on the same communicator; measured), the own block copied.
  struct Pending {
    std::vector<MPI_Request> requests;  // empty when the slot is free
    std::vector<int> scounts, sdispls, rcounts, rdispls;
  };
  void fill_counts(std::span<const int64_t> send_counts, std::span<const int64_t> recv_counts, int64_t row_len,
                   std::vector<int>& sc, std::vector<int>& sd, std::vector<int>& rc, std::vector<int>& rd);
  // Slots reused; a deque, so growing never moves one in flight. tag_: exchanges are numbered in start order.
  std::deque<Pending> pending_;
  double wait_seconds_ = 0;
  int tag_ = 0;
  bool overlap_ = true;
  int64_t gather_span_floats_ = INT_MAX;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::vector<int> scounts_, sdispls_, rcounts_, rdispls_;
  std::vector<float> staging_;  // send copy when send == recv (Alltoallv cannot work in place with varying counts)
};

}  // namespace trex::dist
