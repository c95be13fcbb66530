// The collectives of `trex train --device cuda --dp N` on device memory: the gradient all-reduce (a float buffer
// summed over the data-parallel ranks, then scaled: 1 / ranks is model::Model::reduce_gradients' average) and
// ZeRO-1's all-gather of the updated weight shards. Two ways behind one interface:
//  - staged through the host over the trainer's MPI process group (any number of ranks per GPU; the tests share
//    one): device -> host, MPI all-reduce / all-gather, host -> device;
//  - NCCL, device to device, where every rank has a GPU of its own (ncclAllReduce; the all-gather as one grouped
//    ncclBroadcast per rank, since shards differ in size; the communicator's id goes from rank 0 to the others
//    over the MPI group). NCCL is opened at run time (nccl_api.hpp).
// make_device_group picks NCCL when NCCL is built in and loads and the ranks do not share a device, else the host.
// NCCL has not run anywhere yet: the machines here have no GPU, the GPU machine one (docs/cuda.md). CUDA builds
// only.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "model/process_group.hpp"

namespace trex::cuda {

class DeviceGroup {
 public:
  virtual ~DeviceGroup() = default;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // for the log: "host-staged MPI" / "NCCL"
  // data[0, n) := scale * (the sum over the ranks of data[0, n)); complete when it returns.
  virtual void all_reduce_sum(float* data, int64_t n, float scale, cudaStream_t s) = 0;
  // In place: rank r's range [displs[r], displs[r] + counts[r]) of data to every rank; complete when it returns.
  virtual void all_gather_ranges(float* data, std::span<const int64_t> displs, std::span<const int64_t> counts,
                                 cudaStream_t s) = 0;
};

// Through the host (max_floats: the largest n, the staging buffer's size, allocated once).
std::unique_ptr<DeviceGroup> make_host_staged_group(model::ProcessGroup& pg, int64_t max_floats);
// NCCL over pg's ranks (collective over pg). Throws trex::Error when this build has no NCCL or it does not load.
std::unique_ptr<DeviceGroup> make_nccl_group(model::ProcessGroup& pg);
// NCCL where it can run (built in, loads, each rank of the job on its own device: devices >= job_ranks), else
// host-staged. pg: the job or a subgroup of it (a replica region's ranks).
std::unique_ptr<DeviceGroup> make_device_group(model::ProcessGroup& pg, int64_t max_floats, int job_ranks);

// Which device this rank uses: rank % the visible devices (one node); cudaSetDevice'd before anything is allocated.
int select_device_for_rank(int rank);
// How many of the job's ranks select_device_for_rank puts on this rank's device (1: it has one of its own).
int ranks_on_device(int job_ranks, int rank);

}  // namespace trex::cuda
