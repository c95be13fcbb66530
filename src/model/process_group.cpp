// Single-process ProcessGroup.
#include "model/process_group.hpp"

#include <algorithm>
#include <cstring>

#include "util/error.hpp"

namespace trex::model {

void SingleProcessGroup::all_to_all_rows(const float* send, std::span<const int64_t> send_counts, float* recv,
                                         std::span<const int64_t> recv_counts, int64_t row_len) {
  if (send_counts.size() != 1 || recv_counts.size() != 1 || send_counts[0] != recv_counts[0])
    throw Error("SingleProcessGroup: counts must be one entry each and equal");
  if (send != recv && send_counts[0] > 0)
    std::memcpy(recv, send, size_t(send_counts[0] * row_len) * sizeof(float));
}

void SingleProcessGroup::all_to_all_counts(std::span<const int64_t> send_counts, std::span<int64_t> recv_counts) {
  if (send_counts.size() != recv_counts.size()) throw Error("SingleProcessGroup: count spans differ in size");
  std::copy(send_counts.begin(), send_counts.end(), recv_counts.begin());
}

ProcessGroup& single_process_group() {
  static SingleProcessGroup g;
  return g;
}

}  // namespace trex::model
