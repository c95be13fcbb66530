// NCCL opened on first use (nccl_api.hpp).
#include "cuda/nccl_api.hpp"

#include <string>

#include "cuda/shared_library.hpp"

#ifndef TREX_CUDA_LIBRARY_DIR
#define TREX_CUDA_LIBRARY_DIR ""
#endif

namespace trex::cuda {

const NcclApi& nccl() {
  static const NcclApi api = [] {
    static const SharedLibrary lib("libnccl.so." + std::to_string(NCCL_MAJOR), TREX_CUDA_LIBRARY_DIR,
                                   "install NCCL or add its library folder to LD_LIBRARY_PATH");
    NcclApi a{};
    lib.resolve(a.get_unique_id, "ncclGetUniqueId");
    lib.resolve(a.comm_init_rank, "ncclCommInitRank");
    lib.resolve(a.comm_destroy, "ncclCommDestroy");
    lib.resolve(a.all_reduce, "ncclAllReduce");
    lib.resolve(a.broadcast, "ncclBroadcast");
    lib.resolve(a.group_start, "ncclGroupStart");
    lib.resolve(a.group_end, "ncclGroupEnd");
    lib.resolve(a.error_string, "ncclGetErrorString");
    return a;
  }();
  return api;
}

}  // namespace trex::cuda
