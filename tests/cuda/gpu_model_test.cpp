// The GPU model's host side, without a device (CUDA builds): cuda::Model and the trainer's CUDA step refuse to
// start without a usable device and say why; the 1B bench preset is what docs/cuda.md says (about 1B parameters, Flash's layer types) and fits
// the device kernels' stated limits, so the bench cannot fail on a GPU for a reason visible here.
#include <gtest/gtest.h>

#if TREX_HAVE_CUDA
#include <string>

#include "cuda/device.hpp"
#include "cuda/gpu_model.hpp"
#include "cuda/gpu_train_step.hpp"
#include "cuda/moe_route.hpp"
#include "cuda/ops.hpp"
#include "cuda/sparse_attention.hpp"
#include "model/model_info.hpp"
#include "model_parity.hpp"
#include "util/error.hpp"

using namespace trex;

TEST(CudaModelHost, RefusesToStartWithoutADeviceAndSaysWhy) {
  if (cuda::available()) GTEST_SKIP() << "a CUDA device is present here: the gpu-labelled CudaModel tests cover it";
  try {
    cuda::Model m(model::ModelConfig::preset("tiny"));
    FAIL() << "cuda::Model started without a device";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no usable CUDA device"), std::string::npos) << what;
    EXPECT_NE(what.find(cuda::availability().reason), std::string::npos) << what;
  }
}

TEST(CudaModelHost, TrainStepRefusesToStartWithoutADeviceAndSaysWhy) {
  if (cuda::available()) GTEST_SKIP() << "a CUDA device is present here: the gpu-labelled CudaModel tests cover it";
  train::DeviceStepConfig c;
  c.model = model::ModelConfig::preset("tiny");
  try {
    cuda::make_gpu_train_step(c);
    FAIL() << "the CUDA train step started without a device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(cuda::availability().reason), std::string::npos) << e.what();
  }
}

TEST(CudaModelHost, BenchPresetIsAboutOneBillionParametersWithFlashLayerTypes) {
  const model::ModelConfig c = cuda::check::bench_1b_config();
  const model::ParamCounts pc = model::count_parameters(c);
  EXPECT_GE(pc.total, int64_t(900'000'000));
  EXPECT_LE(pc.total, int64_t(1'200'000'000));
  EXPECT_EQ(pc.swa_layers, 2);
  EXPECT_EQ(pc.csa_layers, 5);
  EXPECT_EQ(pc.hca_layers, 5);
  EXPECT_EQ(c.compress_ratios.back(), 0);  // the MTP block: SWA, as Flash's
  std::printf("bench preset: %.3f B total, %.3f B with MTP, %.3f B active; %.2f GFLOP/token train at 4096\n",
              double(pc.total) / 1e9, double(pc.total_with_mtp) / 1e9, double(pc.active) / 1e9,
              model::flops_per_token(c, 4096).train / 1e9);
}

TEST(CudaModelHost, BenchPresetFitsTheKernelsLimits) {
  const model::ModelConfig c = cuda::check::bench_1b_config();
  EXPECT_LE(c.head_dim, cuda::kMaxAttentionHeadDim);
  EXPECT_LE(c.index_topk, cuda::kMaxTopk);
  EXPECT_LE(c.n_routed_experts, cuda::kMaxRouteExperts);
  EXPECT_LE(c.num_experts_per_tok, cuda::kMaxRouteK);
  EXPECT_LE(c.hc_mult, 8);
  EXPECT_EQ(c.num_attention_heads * c.head_dim % c.o_groups, 0);
}
#endif
