// What this trex executable can run on CUDA: the trainer, in builds that carry the GPU model (CUDA found at
// configure time: src/cli/CMakeLists.txt defines TREX_HAVE_CUDA_MODEL). Generation and serving cannot yet.
#pragma once

namespace trex::cli {

#if TREX_HAVE_CUDA_MODEL
inline constexpr bool kTrainsOnCuda = true;
#else
inline constexpr bool kTrainsOnCuda = false;
#endif

}  // namespace trex::cli
