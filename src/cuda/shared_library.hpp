// A shared library opened at run time (dlopen) and its entry points (dlsym), for the large CUDA libraries trex
// uses only on a GPU path: linking them costs every process at startup (cuBLASLt: ≈ 60 ms and ≈ 200 MB resident,
// cublaslt_api.hpp), opening them costs only the runs that use them. CUDA builds only.
#pragma once
#include <string>

namespace trex::cuda {

class SharedLibrary {
 public:
  // Opens `soname` from the loader's search path, else from `fallback_dir` (the toolkit's library folder found at
  // configure time; may be empty). Throws trex::Error naming every path tried and dlerror()'s answers, and `hint`.
  SharedLibrary(const std::string& soname, const std::string& fallback_dir, const std::string& hint);
  // Never dlclose'd: handles made from it may be destroyed at exit, after static destructors run.
  ~SharedLibrary() = default;

  // The entry point `name` as a function pointer of type Fn; throws trex::Error when the library lacks it.
  template <class Fn>
  void resolve(Fn& fn, const char* name) const {
    fn = reinterpret_cast<Fn>(symbol(name));
  }
  const std::string& soname() const { return soname_; }

 private:
  void* symbol(const char* name) const;
  std::string soname_;
  void* handle_ = nullptr;
};

}  // namespace trex::cuda
