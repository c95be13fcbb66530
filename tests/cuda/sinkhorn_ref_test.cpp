// The double twin of the mHC Sinkhorn (tests/cuda/gpu/sinkhorn_ref.hpp), which sizes the CUDA kernel's bound and
// needs no device: it agrees with the CPU's float nn::sinkhorn_forward / sinkhorn_backward to float accuracy, and
// its backward is the gradient of its forward (central differences in double). CUDA builds only (it lives in the
// gpu harness library); runs on machines without a GPU.
#include <gtest/gtest.h>

#if TREX_HAVE_CUDA
#include <cmath>
#include <vector>

#include "nn/ops.hpp"
#include "op_check.hpp"
#include "sinkhorn_ref.hpp"
#include "util/rng.hpp"

using namespace trex;
using namespace trex::cuda::check;

TEST(CudaSinkhornRef, DoubleTwinMatchesTheCpuAndItsOwnFiniteDifferences) {
  const double eps = 1e-6;
  for (int n : {2, 4, 8})
    for (int iters : {1, 20}) {
      Rng rng(uint64_t(n * 31 + iters));
      const std::vector<float> a = randn(rng, size_t(n * n), 2.0), dm = randn(rng, size_t(n * n));
      std::vector<float> m(a.size()), da(a.size());
      nn::sinkhorn_forward(a.data(), m.data(), n, iters, float(eps));
      nn::sinkhorn_backward(a.data(), dm.data(), da.data(), n, iters, float(eps));
      const std::vector<double> rm = sinkhorn_forward_double(a.data(), n, iters, eps);
      const std::vector<double> rd = sinkhorn_backward_double(a.data(), dm.data(), n, iters, eps);
      double max_da = 0;
      for (double v : rd) max_da = std::max(max_da, std::fabs(v));
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_NEAR(m[i], rm[i], 1e-5) << "n " << n << " iters " << iters << " i " << i;
        EXPECT_NEAR(da[i], rd[i], 1e-4 * max_da + 1e-6) << "n " << n << " iters " << iters << " i " << i;
      }
      // d/da_i of sum_j dm_j M_j by central differences, in double
      const std::vector<double> ad(a.begin(), a.end());
      for (size_t i = 0; i < a.size(); ++i) {
        const double h = 1e-5;
        std::vector<double> ap = ad, am = ad;
        ap[i] += h;
        am[i] -= h;
        const std::vector<double> mp = sinkhorn_forward_double(ap, n, iters, eps),
                                  mm = sinkhorn_forward_double(am, n, iters, eps);
        double fd = 0;
        for (size_t j = 0; j < mp.size(); ++j) fd += double(dm[j]) * (mp[j] - mm[j]) / (2 * h);
        EXPECT_NEAR(rd[i], fd, 1e-7 * (1 + max_da)) << "n " << n << " iters " << iters << " i " << i;
      }
    }
}
#endif
