// cuBLASLt opened on first use (cublaslt_api.hpp).
#include "cuda/cublaslt_api.hpp"

#include "cuda/shared_library.hpp"

#ifndef TREX_CUBLASLT_SONAME
#error "TREX_CUBLASLT_SONAME (libcublasLt.so.<major>) comes from src/cuda/CMakeLists.txt"
#endif
#ifndef TREX_CUDA_LIBRARY_DIR
#define TREX_CUDA_LIBRARY_DIR ""
#endif

namespace trex::cuda {

namespace {

CublasLtApi load() {
  static const SharedLibrary lib(TREX_CUBLASLT_SONAME, TREX_CUDA_LIBRARY_DIR,
                                 "install the CUDA toolkit's cuBLAS or add its library folder to LD_LIBRARY_PATH");
  CublasLtApi a{};
  lib.resolve(a.create, "cublasLtCreate");
  lib.resolve(a.destroy, "cublasLtDestroy");
  lib.resolve(a.status_name, "cublasLtGetStatusName");
  lib.resolve(a.status_string, "cublasLtGetStatusString");
  lib.resolve(a.matmul, "cublasLtMatmul");
  lib.resolve(a.algo_get_heuristic, "cublasLtMatmulAlgoGetHeuristic");
  lib.resolve(a.desc_create, "cublasLtMatmulDescCreate");
  lib.resolve(a.desc_destroy, "cublasLtMatmulDescDestroy");
  lib.resolve(a.desc_set_attribute, "cublasLtMatmulDescSetAttribute");
  lib.resolve(a.preference_create, "cublasLtMatmulPreferenceCreate");
  lib.resolve(a.preference_destroy, "cublasLtMatmulPreferenceDestroy");
  lib.resolve(a.preference_set_attribute, "cublasLtMatmulPreferenceSetAttribute");
  lib.resolve(a.layout_create, "cublasLtMatrixLayoutCreate");
  lib.resolve(a.layout_destroy, "cublasLtMatrixLayoutDestroy");
  return a;
}

}  // namespace

const CublasLtApi& cublaslt() {
  static const CublasLtApi api = load();  // a throw leaves it unset: the next call tries again and says why again
  return api;
}

}  // namespace trex::cuda
