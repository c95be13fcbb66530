// The embedding gradient's inverse lists (cuda::build_embedding_lists, src/cuda/model_glue.hpp), which need no
// device: ids, offsets and position orders on hand examples, empty and one-id batches, random batches against a
// plain inverse; tokens outside the vocabulary rejected with a trex::Error naming the token and its position. And
// the claim the device kernel rests on: summing per id over the lists in list order, as the kernel does (the CPU
// twin in tests/cuda/gpu/glue_cases.cpp), gives model.cpp's embedding gradient BITWISE — while the same lists in
// reversed order do not on the gpu checks' spread inputs, so those checks can tell an order change. CUDA builds only
// (the function is compiled with the kernels); runs on machines without a GPU.
#include <gtest/gtest.h>

#if TREX_HAVE_CUDA
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cuda/model_glue.hpp"
#include "glue_cases.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

using trex::cuda::build_embedding_lists;
using trex::cuda::EmbeddingLists;
namespace check = trex::cuda::check;

namespace {
int64_t bits_differing(const std::vector<float>& a, const std::vector<float>& b) {
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], 4) != 0;
  return n;
}
}  // namespace

TEST(CudaEmbeddingLists, HandExample) {
  const std::vector<int32_t> tok = {3, 1, 3, 0, 3, 1};
  const EmbeddingLists L = build_embedding_lists(tok.data(), int64_t(tok.size()), 5);
  EXPECT_EQ(L.ids, (std::vector<int32_t>{0, 1, 3}));
  EXPECT_EQ(L.offsets, (std::vector<int32_t>{0, 1, 3, 6}));
  EXPECT_EQ(L.positions, (std::vector<int32_t>{3, 1, 5, 0, 2, 4}));  // each id's positions increasing
  EXPECT_EQ(L.distinct(), 3);
}

TEST(CudaEmbeddingLists, EmptyAndSingleId) {
  const EmbeddingLists E = build_embedding_lists(nullptr, 0, 8);
  EXPECT_TRUE(E.ids.empty());
  EXPECT_EQ(E.offsets, (std::vector<int32_t>{0}));
  EXPECT_TRUE(E.positions.empty());
  const std::vector<int32_t> same(9, 7);
  const EmbeddingLists S = build_embedding_lists(same.data(), 9, 8);
  EXPECT_EQ(S.ids, (std::vector<int32_t>{7}));
  EXPECT_EQ(S.offsets, (std::vector<int32_t>{0, 9}));
  EXPECT_EQ(S.positions, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  const std::vector<int32_t> ends = {0, 4095, 0};  // both ends of the vocabulary
  const EmbeddingLists B = build_embedding_lists(ends.data(), 3, 4096);
  EXPECT_EQ(B.ids, (std::vector<int32_t>{0, 4095}));
  EXPECT_EQ(B.offsets, (std::vector<int32_t>{0, 2, 3}));
  EXPECT_EQ(B.positions, (std::vector<int32_t>{0, 2, 1}));
}

TEST(CudaEmbeddingLists, RandomBatchesMatchAPlainInverse) {
  trex::Rng r(17);
  for (int rep = 0; rep < 6; ++rep) {
    const int64_t V = rep % 2 ? 50 : 8192, N = 1 + r.uniform_int(0, 2000);
    const std::vector<int32_t> tok = check::draw_tokens(r, N, V, rep % 3 == 0);
    std::map<int32_t, std::vector<int32_t>> inv;  // ordered by id, positions appended in increasing order
    for (int64_t i = 0; i < N; ++i) inv[tok[size_t(i)]].push_back(int32_t(i));
    const EmbeddingLists L = build_embedding_lists(tok.data(), N, V);
    ASSERT_EQ(L.distinct(), int64_t(inv.size()));
    ASSERT_EQ(L.offsets.size(), inv.size() + 1);
    ASSERT_EQ(L.positions.size(), size_t(N));
    EXPECT_EQ(L.offsets.front(), 0);
    EXPECT_EQ(L.offsets.back(), N);
    size_t u = 0;
    for (const auto& [id, pos] : inv) {
      EXPECT_EQ(L.ids[u], id);
      const std::vector<int32_t> got(L.positions.begin() + L.offsets[u], L.positions.begin() + L.offsets[u + 1]);
      EXPECT_EQ(got, pos) << "id " << id;
      ++u;
    }
  }
}

TEST(CudaEmbeddingLists, RejectsTokensOutsideTheVocabulary) {
  const std::vector<int32_t> high = {1, 2, 5, 0};
  try {
    build_embedding_lists(high.data(), 4, 5);
    FAIL() << "token 5 of a 5-token vocabulary accepted";
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("token id 5 at position 2 outside the vocabulary [0, 5)"),
              std::string::npos)
        << e.what();
  }
  const std::vector<int32_t> low = {0, -1};
  EXPECT_THROW(build_embedding_lists(low.data(), 2, 5), trex::Error);
  EXPECT_THROW(build_embedding_lists(high.data(), 4, 0), trex::Error);
  EXPECT_THROW(build_embedding_lists(high.data(), -1, 5), trex::Error);
}

// The device kernel's order (the lists twin) against model.cpp's loop (the oracle), main path (n 4) and an MTP
// module (n 1, shifted tokens), onto a seeded gradient, in the model's order (MTP rows first).
TEST(CudaEmbeddingLists, ListOrderGivesTheModelsBits) {
  trex::Rng r(5);
  const int64_t B = 3, T = 41, N = B * T, n = 4, d = 24, V = 60, Tm = T - 1, Nm = B * Tm;
  const std::vector<int32_t> tok = check::draw_tokens(r, N, V, true);
  const std::vector<int32_t> etok = check::mtp_tokens_cpu(tok.data(), B, T, Tm, 1);
  EXPECT_EQ(etok[size_t(1 * Tm + 5)], tok[size_t(1 * T + 6)]);
  const std::vector<float> gE0 = check::spread(r, size_t(V * d));
  const std::vector<float> dX = check::spread(r, size_t(N * n * d)), de = check::spread(r, size_t(Nm * d));

  std::vector<float> model = gE0, twin = gE0, reversed = gE0;
  check::embedding_backward_cpu(etok.data(), Nm, 1, d, de.data(), model.data());
  check::embedding_backward_cpu(tok.data(), N, n, d, dX.data(), model.data());
  const EmbeddingLists Lm = build_embedding_lists(etok.data(), Nm, V), L = build_embedding_lists(tok.data(), N, V);
  check::embedding_backward_lists_twin(Lm, 1, d, de.data(), twin.data());
  check::embedding_backward_lists_twin(L, n, d, dX.data(), twin.data());
  EXPECT_EQ(check::same_bits("twin", twin, model).bad, 0);

  check::embedding_backward_lists_twin(Lm, 1, d, de.data(), reversed.data(), true);
  check::embedding_backward_lists_twin(L, n, d, dX.data(), reversed.data(), true);
  // another order is visible wherever an id has two or more positions: the rows of those ids mostly change bits
  int64_t reorderable = 0;
  for (int64_t u = 0; u < L.distinct(); ++u) reorderable += L.offsets[size_t(u + 1)] - L.offsets[size_t(u)] >= 2;
  ASSERT_GT(reorderable, 3);
  const int64_t moved = bits_differing(reversed, model);
  EXPECT_GT(moved, reorderable * d / 2) << "the spread inputs must make another order visible";
  const std::vector<float> row0(reversed.begin(), reversed.begin() + d), ref0(model.begin(), model.begin() + d);
  EXPECT_GT(bits_differing(row0, ref0), d / 2) << "id 0 (~40 % of the positions)";
  EXPECT_GT(check::same_bits("reversed", reversed, model).bad, 0);
}

TEST(CudaEmbeddingLists, StreamSumOracleIsTheModelsLoop) {
  // sum_streams_cpu starts from +0 as the model's zeroed buffer does: a row of -0 streams sums to +0
  const std::vector<float> dX = {-0.0f, 1.0f, -0.0f, 2.0f};  // rows 1, n 2, d 2: streams {-0, 1}, {-0, 2}
  std::vector<float> out(2, 7.0f);
  check::sum_streams_cpu(dX.data(), 1, 2, 2, out.data());
  EXPECT_FALSE(std::signbit(out[0]));
  EXPECT_EQ(out[1], 3.0f);
}
#else
TEST(CudaEmbeddingLists, NotBuilt) { GTEST_SKIP() << "built without the CUDA backend (-DTREX_CUDA=OFF or no nvcc)"; }
#endif
