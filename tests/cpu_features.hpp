// Tests of a CPU feature's kernel skip, with the reason, on a CPU without the feature (ctest counts them as
// skipped: gtest_discover_tests sets SKIP_REGULAR_EXPRESSION), instead of failing on one host and passing on another.
#pragma once
#include <gtest/gtest.h>

#include "nn/gemm_bf16.hpp"

// In a test body (GTEST_SKIP returns from the enclosing function).
#define TREX_REQUIRE_BF16()                                                                           \
  do {                                                                                                \
    if (!trex::nn::bf16_matmul_supported())                                                           \
      GTEST_SKIP() << "this CPU lacks AVX512_BF16: the bf16 kernel cannot run here (every host of the " \
                      "project's machine kind, AMD Zen 4 and Zen 5, has it)";                       \
  } while (0)
