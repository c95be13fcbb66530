// ProcessGroup: the seam between the model and parallelism. Gradient reduction (data parallel) and MoE token
// dispatch/combine (expert parallel) go through this interface; the model never talks to MPI directly. The
// single-process implementation here is the identity; an MPI implementation plugs in later (src/dist).
#pragma once
#include <cstdint>
#include <span>

namespace trex::model {

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In-place sum over all ranks.
  virtual void all_reduce_sum(std::span<float> data) = 0;
  // The same in double (partial sums that must not lose precision: a gradient norm's squares).
  virtual void all_reduce_sum(std::span<double> data) = 0;
  // Variable all-to-all of rows of `row_len` floats: send_counts[r] rows go to rank r (in rank order);
  // recv receives recv_counts[r] rows from rank r. Counts are in rows. Used to dispatch tokens to the rank
  // owning their expert and to combine the results back.
  virtual void all_to_all_rows(const float* send, std::span<const int64_t> send_counts, float* recv,
                               std::span<const int64_t> recv_counts, int64_t row_len) = 0;
  // Exchange of per-rank counts: send_counts holds size() blocks of k = send_counts.size() / size() counts;
  // block r goes to rank r, recv_counts[r*k .. r*k+k) comes from rank r (k = 1: one count per rank).
  virtual void all_to_all_counts(std::span<const int64_t> send_counts, std::span<int64_t> recv_counts) = 0;
  // In-place all-gather of contiguous ranges (ZeRO-1's updated shards): rank r owns [displs[r], displs[r] +
  // counts[r]) of data, and every rank ends with every rank's range.
  virtual void all_gather_ranges(std::span<float> data, std::span<const int64_t> displs,
                                 std::span<const int64_t> counts) = 0;

  // Nonblocking all_to_all_rows, for overlapping the exchange with computation (expert parallelism overlaps
  // it with the shared expert). send and recv must not overlap and must stay valid until wait(handle); call
  // progress() now and then while computing (Open MPI has no asynchronous progress). The default runs the
  // blocking exchange at once.
  virtual int start_all_to_all_rows(const float* send, std::span<const int64_t> send_counts, float* recv,
                                    std::span<const int64_t> recv_counts, int64_t row_len) {
    all_to_all_rows(send, send_counts, recv, recv_counts, row_len);
    return -1;
  }
  virtual void progress() {}
  virtual void wait(int handle) { (void)handle; }
};

// One process: reductions are no-ops, dispatch is a copy.
class SingleProcessGroup final : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_reduce_sum(std::span<float>) override {}
  void all_reduce_sum(std::span<double>) override {}
  void all_to_all_rows(const float* send, std::span<const int64_t> send_counts, float* recv,
                       std::span<const int64_t> recv_counts, int64_t row_len) override;
  void all_to_all_counts(std::span<const int64_t> send_counts, std::span<int64_t> recv_counts) override;
  void all_gather_ranges(std::span<float>, std::span<const int64_t>, std::span<const int64_t>) override {}
};

// The process-wide default single-process group.
ProcessGroup& single_process_group();

}  // namespace trex::model
