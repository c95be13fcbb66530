// cuBLASLt opened on first use (src/cuda/cublaslt_api.hpp), CUDA builds, no device needed: every entry point
// resolves from the toolkit's library and answers (a status name needs no GPU); the trex executable does not load
// the library for a command that stays on the CPU (the dynamic loader's own log says which libraries it opens).
#include <gtest/gtest.h>

#if TREX_HAVE_CUDA
#include <string>

#include "cuda/cublaslt_api.hpp"
#include "run_command.hpp"

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
}
#endif
