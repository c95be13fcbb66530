// The data-parallel gradient all-reduce on the device: host-staged and NCCL (device_group.hpp).
#include "cuda/device_group.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cuda/check.hpp"
#include "cuda/model_glue.hpp"
#include "util/error.hpp"
#if TREX_HAVE_NCCL
#include "cuda/nccl_api.hpp"
#endif

namespace trex::cuda {

namespace {

class HostStagedGroup : public DeviceGroup {
 public:
  HostStagedGroup(model::ProcessGroup& pg, int64_t max_floats) : pg_(pg), host_(size_t(max_floats), 0.0f) {}
  int size() const override { return pg_.size(); }
  std::string name() const override { return "host-staged MPI"; }
  void all_reduce_sum(float* data, int64_t n, float scale, cudaStream_t s) override {
    if (n > int64_t(host_.size())) throw Error("device group: all-reduce of more floats than its staging buffer");
    const size_t bytes = sizeof(float) * size_t(n);
    // Both copies on s: a plain cudaMemcpy runs on the legacy stream, which a non-blocking s is not ordered after,
    // and from pageable memory it may return before the data has landed — the scale could read stale values.
    TREX_CUDA_CHECK(cudaMemcpyAsync(host_.data(), data, bytes, cudaMemcpyDeviceToHost, s));
    TREX_CUDA_CHECK(cudaStreamSynchronize(s));
    pg_.all_reduce_sum(std::span<float>(host_.data(), size_t(n)));
    TREX_CUDA_CHECK(cudaMemcpyAsync(data, host_.data(), bytes, cudaMemcpyHostToDevice, s));
    scale_in_place(data, n, scale, s);
    TREX_CUDA_CHECK(cudaStreamSynchronize(s));  // host_ is rewritten by the next call
  }
  void all_gather_ranges(float* data, std::span<const int64_t> displs, std::span<const int64_t> counts,
                         cudaStream_t s) override {
    const size_t me = size_t(pg_.rank());
    int64_t n = 0;
    for (size_t r = 0; r < counts.size(); ++r) n = std::max(n, displs[r] + counts[r]);
    if (n > int64_t(host_.size())) throw Error("device group: all-gather of more floats than its staging buffer");
    // this rank's range down, every range through MPI, the others' ranges up (copies on s, as above)
    TREX_CUDA_CHECK(cudaMemcpyAsync(host_.data() + displs[me], data + displs[me], sizeof(float) * size_t(counts[me]),
                                    cudaMemcpyDeviceToHost, s));
    TREX_CUDA_CHECK(cudaStreamSynchronize(s));
    pg_.all_gather_ranges(std::span<float>(host_.data(), size_t(n)), displs, counts);
    for (size_t r = 0; r < counts.size(); ++r)
      if (r != me && counts[r] > 0)
        TREX_CUDA_CHECK(cudaMemcpyAsync(data + displs[r], host_.data() + displs[r], sizeof(float) * size_t(counts[r]),
                                        cudaMemcpyHostToDevice, s));
    TREX_CUDA_CHECK(cudaStreamSynchronize(s));
  }

 private:
  model::ProcessGroup& pg_;
  std::vector<float> host_;
};

#if TREX_HAVE_NCCL
#define TREX_NCCL_CHECK(call)                                                                          \
  do {                                                                                                 \
    const ncclResult_t r_ = (call);                                                                    \
    if (r_ != ncclSuccess) throw Error(std::string(#call) + " failed: " + nccl().error_string(r_));    \
  } while (0)

class NcclGroup : public DeviceGroup {
 public:
  explicit NcclGroup(model::ProcessGroup& pg) : size_(pg.size()) {
    const NcclApi& api = nccl();
    ncclUniqueId id{};
    if (pg.rank() == 0) TREX_NCCL_CHECK(api.get_unique_id(&id));
    // rank 0's id to every rank over the MPI group: its bytes as floats (0..255, exact), zeros elsewhere, summed
    std::vector<float> bytes(sizeof id.internal, 0.0f);
    if (pg.rank() == 0)
      for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = float(static_cast<unsigned char>(id.internal[i]));
    pg.all_reduce_sum(bytes);
    for (size_t i = 0; i < bytes.size(); ++i) id.internal[i] = char(static_cast<unsigned char>(bytes[i]));
    TREX_NCCL_CHECK(api.comm_init_rank(&comm_, size_, id, pg.rank()));
  }
  ~NcclGroup() override {
    if (comm_) nccl().comm_destroy(comm_);
  }
  int size() const override { return size_; }
  std::string name() const override { return "NCCL"; }
  void all_reduce_sum(float* data, int64_t n, float scale, cudaStream_t s) override {
    TREX_NCCL_CHECK(nccl().all_reduce(data, data, size_t(n), ncclFloat32, ncclSum, comm_, s));
    scale_in_place(data, n, scale, s);  // sum, then the factor, as the CPU's reduce_gradients
    TREX_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  void all_gather_ranges(float* data, std::span<const int64_t> displs, std::span<const int64_t> counts,
                         cudaStream_t s) override {
    const NcclApi& api = nccl();
    TREX_NCCL_CHECK(api.group_start());
    for (int r = 0; r < size_; ++r)  // ncclAllGather wants equal counts; shards end at tensor boundaries
      if (counts[size_t(r)] > 0) {
        float* range = data + displs[size_t(r)];
        TREX_NCCL_CHECK(api.broadcast(range, range, size_t(counts[size_t(r)]), ncclFloat32, r, comm_, s));
      }
    TREX_NCCL_CHECK(api.group_end());
    TREX_CUDA_CHECK(cudaStreamSynchronize(s));
  }

 private:
  int size_ = 1;
  ncclComm_t comm_ = nullptr;
};
#endif

}  // namespace

std::unique_ptr<DeviceGroup> make_host_staged_group(model::ProcessGroup& pg, int64_t max_floats) {
  return std::make_unique<HostStagedGroup>(pg, max_floats);
}

std::unique_ptr<DeviceGroup> make_nccl_group(model::ProcessGroup& pg) {
#if TREX_HAVE_NCCL
  return std::make_unique<NcclGroup>(pg);
#else
  (void)pg;
  throw Error("this trex was built without NCCL (CMake found no nccl.h / libnccl): device groups are host-staged");
#endif
}

std::unique_ptr<DeviceGroup> make_device_group(model::ProcessGroup& pg, int64_t max_floats, int job_ranks) {
  int devices = 0;
  TREX_CUDA_CHECK(cudaGetDeviceCount(&devices));
  // Every rank decides alike (the same device count on one node, the same job size), so the collective NCCL setup
  // is entered by all or by none; a rank whose NCCL fails to load throws, and the trainer ends the job with its
  // reason. The job's size, not pg's: devices go by job rank (select_device_for_rank), so a subgroup smaller than
  // the device count can still hold two ranks on one device, which NCCL refuses.
#if TREX_HAVE_NCCL
  if (devices >= job_ranks) return make_nccl_group(pg);
#endif
  return make_host_staged_group(pg, max_floats);
}

int select_device_for_rank(int rank) {
  int devices = 0;
  TREX_CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (devices < 1) throw Error("no CUDA device to select");
  const int d = rank % devices;
  TREX_CUDA_CHECK(cudaSetDevice(d));
  return d;
}

int ranks_on_device(int job_ranks, int rank) {
  int devices = 0;
  TREX_CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (devices < 1) throw Error("no CUDA device");
  const int d = rank % devices;  // the ranks r < job_ranks with r % devices == d
  return job_ranks / devices + (d < job_ranks % devices ? 1 : 0);
}

}  // namespace trex::cuda
