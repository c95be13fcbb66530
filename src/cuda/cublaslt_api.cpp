// cuBLASLt opened on first use (cublaslt_api.hpp).
#include "cuda/cublaslt_api.hpp"

#include <dlfcn.h>

#include <string>

#include "util/error.hpp"

#ifndef TREX_CUBLASLT_SONAME
#error "TREX_CUBLASLT_SONAME (libcublasLt.so.<major>) comes from src/cuda/CMakeLists.txt"
#endif
#ifndef TREX_CUDA_LIBRARY_DIR
#define TREX_CUDA_LIBRARY_DIR ""
#endif

namespace trex::cuda {

namespace {

CublasLtApi load() {
  const std::string soname = TREX_CUBLASLT_SONAME, dir = TREX_CUDA_LIBRARY_DIR;
  void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string tried;
  if (!lib) {
    const char* e = dlerror();
    tried = soname + " (" + (e ? e : "?") + ")";
  }
  if (!lib && !dir.empty()) {
    const std::string path = dir + "/" + soname;
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      tried += ", " + path + " (" + (e ? e : "?") + ")";
    }
  }
  if (!lib)
    throw Error("cuBLASLt could not be loaded: tried " + tried +
                "; install the CUDA toolkit's cuBLAS or add its library folder to LD_LIBRARY_PATH");
  // Never dlclose'd: the library lives as long as the process (handles may be destroyed at exit).
  auto sym = [&](auto& fn, const char* name) {
    dlerror();
    void* p = dlsym(lib, name);
    if (!p) throw Error(std::string("cuBLASLt: ") + soname + " has no symbol " + name + " (an older cuBLAS?)");
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  CublasLtApi a{};
  sym(a.create, "cublasLtCreate");
  sym(a.destroy, "cublasLtDestroy");
  sym(a.status_name, "cublasLtGetStatusName");
  sym(a.status_string, "cublasLtGetStatusString");
  sym(a.matmul, "cublasLtMatmul");
  sym(a.algo_get_heuristic, "cublasLtMatmulAlgoGetHeuristic");
  sym(a.desc_create, "cublasLtMatmulDescCreate");
  sym(a.desc_destroy, "cublasLtMatmulDescDestroy");
  sym(a.desc_set_attribute, "cublasLtMatmulDescSetAttribute");
  sym(a.preference_create, "cublasLtMatmulPreferenceCreate");
  sym(a.preference_destroy, "cublasLtMatmulPreferenceDestroy");
  sym(a.preference_set_attribute, "cublasLtMatmulPreferenceSetAttribute");
  sym(a.layout_create, "cublasLtMatrixLayoutCreate");
  sym(a.layout_destroy, "cublasLtMatrixLayoutDestroy");
  return a;
}

}  // namespace

const CublasLtApi& cublaslt() {
  static const CublasLtApi api = load();  // a throw leaves it unset: the next call tries again and says why again
  return api;
}

}  // namespace trex::cuda
