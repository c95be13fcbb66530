// TREX_REQUIRE_GPU(): the first line of every gpu-labelled test. Without a usable device the test is SKIPPED with
// the reason (GTEST_SKIP; ctest counts it as skipped through gtest_discover_tests' SKIP_REGULAR_EXPRESSION), never
// passed.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>

#include "cuda/device.hpp"
#include "op_check.hpp"

#define TREX_REQUIRE_GPU()                                                                  \
  do {                                                                                      \
    if (!::trex::cuda::available()) GTEST_SKIP() << ::trex::cuda::availability().reason;    \
  } while (0)

// One op check's verdict: a failure with its report, and the report printed either way (the figures of a GPU run).
inline void expect_ok(const ::trex::cuda::check::OpReport& r) {
  EXPECT_TRUE(r.ok()) << r.str();
  std::printf("%s\n", r.str().c_str());
}
