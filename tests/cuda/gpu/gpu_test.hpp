// TREX_REQUIRE_GPU(): the first line of every gpu-labelled test. Without a usable device the test is SKIPPED with
// the reason (GTEST_SKIP; ctest counts it as skipped through gtest_discover_tests' SKIP_REGULAR_EXPRESSION), never
// passed.
#pragma once
#include <gtest/gtest.h>

#include "cuda/device.hpp"

#define TREX_REQUIRE_GPU()                                                                  \
  do {                                                                                      \
    if (!::trex::cuda::available()) GTEST_SKIP() << ::trex::cuda::availability().reason;    \
  } while (0)
