// NCCL, opened at run time (shared_library.hpp says why: libnccl.so is ≈ 220 MB), with the few entry points the
// device group uses; their types come from nccl.h. Built only where CMake found NCCL (TREX_HAVE_NCCL). CUDA
// builds only.
#pragma once
#include <nccl.h>

namespace trex::cuda {

struct NcclApi {
  decltype(&ncclGetUniqueId) get_unique_id;
  decltype(&ncclCommInitRank) comm_init_rank;
  decltype(&ncclCommDestroy) comm_destroy;
  decltype(&ncclAllReduce) all_reduce;
  decltype(&ncclBroadcast) broadcast;
  decltype(&ncclGroupStart) group_start;
  decltype(&ncclGroupEnd) group_end;
  decltype(&ncclGetErrorString) error_string;
};

// libnccl.so.<major> from the loader's path or the toolkit's library folder, once per process; throws
// trex::Error saying what was tried.
const NcclApi& nccl();

}  // namespace trex::cuda
