// dlopen / dlsym with errors that say what was tried (shared_library.hpp).
#include "cuda/shared_library.hpp"

#include <dlfcn.h>

#include "util/error.hpp"

namespace trex::cuda {

SharedLibrary::SharedLibrary(const std::string& soname, const std::string& fallback_dir, const std::string& hint)
    : soname_(soname) {
  std::string tried;
  for (const std::string& path : {soname, fallback_dir.empty() ? std::string() : fallback_dir + "/" + soname}) {
    if (path.empty()) continue;
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_) return;
    const char* e = dlerror();
    tried += (tried.empty() ? "" : ", ") + path + " (" + (e ? e : "?") + ")";
  }
  throw Error(soname + " could not be loaded: tried " + tried + "; " + hint);
}

void* SharedLibrary::symbol(const char* name) const {
  dlerror();
  void* p = dlsym(handle_, name);
  if (!p) throw Error(soname_ + " has no symbol " + name + " (an older version of the library?)");
  return p;
}

}  // namespace trex::cuda
