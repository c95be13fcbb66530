// The CUDA libraries opened at run time (src/cuda/shared_library.hpp), CUDA builds, no device needed: cuBLASLt's
// and NCCL's entry points resolve from the toolkit's libraries and answer (a status or error string needs no GPU);
// a library that is not there is an error naming what was tried; the trex executable loads neither for a command
// that stays on the CPU (the dynamic loader's own log says which libraries it opens).
#include <gtest/gtest.h>

#if TREX_HAVE_CUDA
#include <string>

#include "cuda/cublaslt_api.hpp"
#include "cuda/shared_library.hpp"
#include "run_command.hpp"
#include "util/error.hpp"
#if TREX_HAVE_NCCL
#include "cuda/nccl_api.hpp"
#endif

TEST(CublasLtApi, EveryEntryPointResolvesWithoutADevice) {
  const trex::cuda::CublasLtApi& a = trex::cuda::cublaslt();
  const void* fns[] = {(const void*)a.create,          (const void*)a.destroy,
                       (const void*)a.status_name,     (const void*)a.status_string,
                       (const void*)a.matmul,          (const void*)a.algo_get_heuristic,
                       (const void*)a.desc_create,     (const void*)a.desc_destroy,
                       (const void*)a.desc_set_attribute, (const void*)a.preference_create,
                       (const void*)a.preference_destroy, (const void*)a.preference_set_attribute,
                       (const void*)a.layout_create,   (const void*)a.layout_destroy};
  for (const void* f : fns) EXPECT_NE(f, nullptr);
  EXPECT_STREQ(a.status_name(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_EQ(&trex::cuda::cublaslt(), &a);  // opened once
}

TEST(CublasLtApi, TrexLoadsItOnlyWhenAsked) {
  int rc = 0;
  const std::string log = trex::testing::run_command("LD_DEBUG=libs " + std::string(TREX_BIN_PATH) + " --version", rc);
  EXPECT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("libc.so"), std::string::npos) << "LD_DEBUG gave no library log: " << log;  // the log works
  EXPECT_EQ(log.find("libcublasLt"), std::string::npos) << log;
  EXPECT_EQ(log.find("libnccl"), std::string::npos) << log;
}

TEST(SharedLibrary, AMissingLibraryNamesWhatWasTried) {
  try {
    trex::cuda::SharedLibrary lib("libtrex-no-such-library.so.1", "/nonexistent/dir", "the hint");
    FAIL() << "a missing library opened";
  } catch (const trex::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("libtrex-no-such-library.so.1 could not be loaded"), std::string::npos) << m;
    EXPECT_NE(m.find("/nonexistent/dir/libtrex-no-such-library.so.1"), std::string::npos) << m;
    EXPECT_NE(m.find("the hint"), std::string::npos) << m;
  }
}

#if TREX_HAVE_NCCL
TEST(NcclApi, EveryEntryPointResolvesWithoutADevice) {
  const trex::cuda::NcclApi& a = trex::cuda::nccl();
  for (const void* f : {(const void*)a.get_unique_id, (const void*)a.comm_init_rank, (const void*)a.comm_destroy,
                        (const void*)a.all_reduce, (const void*)a.error_string})
    EXPECT_NE(f, nullptr);
  EXPECT_NE(std::string(a.error_string(ncclInvalidArgument)).size(), 0u);
}
#endif
#endif
