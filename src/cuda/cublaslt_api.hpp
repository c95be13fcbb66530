// cuBLASLt, loaded when the first Blas is made instead of linked: linking libcublasLt.so costs every process that
// links it ≈ 60 ms and ≈ 200 MB of resident mappings at startup, whether it touches a GPU or not (measured here:
// an empty program linked with -lcublasLt, 0.06 s and 207 MB RSS against 0.00 s and 1 MB). The trex executable
// carries the GPU model, so every `trex` command would pay that; with the library opened on first use only
// `--device cuda` does. The entry points are the cublasLt.h declarations (their types are taken from the header,
// so a changed signature fails to compile), resolved once (shared_library.hpp). CUDA builds only.
#pragma once
#include <cublasLt.h>

namespace trex::cuda {

struct CublasLtApi {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtGetStatusName) status_name;
  decltype(&cublasLtGetStatusString) status_string;
  decltype(&cublasLtMatmul) matmul;
  decltype(&cublasLtMatmulAlgoGetHeuristic) algo_get_heuristic;
  decltype(&cublasLtMatmulDescCreate) desc_create;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set_attribute;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set_attribute;
  decltype(&cublasLtMatrixLayoutCreate) layout_create;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
};

// Opens libcublasLt.so.<the toolkit's major version> (the loader's search path first, then the toolkit's library
// folder found at configure time) and resolves every entry point, once per process. Throws trex::Error naming
// what was tried and dlerror()'s answer when the library or a symbol is missing.
const CublasLtApi& cublaslt();

}  // namespace trex::cuda
