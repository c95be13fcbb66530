// The device layer every build has (src/cuda/device.hpp, device_select.hpp): --device parsing, availability()'s
// answer and its reason, and the CLI's error when CUDA is asked for — "CUDA asked for but <reason>" on a machine
// without a usable device; on one with a device, train and run go on to their own work (training runs on the GPU
// model in CUDA builds) while generate and serve answer "not implemented yet for this command" — never a silent
// CPU run. In CUDA builds also TREX_CUDA_CHECK's message
// (file:line, call, runtime's words). None of these needs a GPU; each checks the branch this machine takes.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cuda/device.hpp"
#include "cuda/device_select.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"
#include "util/error.hpp"
#if TREX_HAVE_CUDA
#include "cuda/check.hpp"
#endif

using namespace trex::cuda;

TEST(CudaDevice, ParseDevice) {
  EXPECT_EQ(parse_device("cpu"), Device::cpu);
  EXPECT_EQ(parse_device("cuda"), Device::cuda);
  EXPECT_STREQ(device_name(Device::cuda), "cuda");
  try {
    parse_device("gpu");
    FAIL() << "parse_device(\"gpu\") did not throw";
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'gpu' is not a device (cpu or cuda)"), std::string::npos) << e.what();
  }
}

TEST(CudaDevice, AvailabilityHasAReasonExactlyWhenAbsent) {
  const Availability& a = availability();
  EXPECT_EQ(a.ok, a.reason.empty()) << a.reason;
  EXPECT_EQ(a.ok, a.devices > 0);
  EXPECT_EQ(a.ok, !a.name.empty());
  if (!built_with_cuda()) {
    EXPECT_FALSE(a.ok);
    EXPECT_NE(a.reason.find("built without the CUDA backend"), std::string::npos) << a.reason;
  } else if (!a.ok) {
    // the runtime's own words: no driver (this development machine, MACHINE.md §8) or no device
    EXPECT_NE(a.reason.find("no usable CUDA device"), std::string::npos) << a.reason;
  }
  std::string why;
  EXPECT_EQ(available(&why), a.ok);
  EXPECT_EQ(why, a.reason);
}

TEST(CudaDevice, RequireDeviceNeverFallsBackSilently) {
  EXPECT_NO_THROW(require_device(Device::cpu, "trex train"));
  // a command that runs on CUDA: accepted exactly when a device is there
  if (available()) {
    EXPECT_NO_THROW(require_device(Device::cuda, "trex train", true));
  } else {
    try {
      require_device(Device::cuda, "trex train", true);
      ADD_FAILURE() << "require_device(cuda) returned without a device";
    } catch (const trex::Error& e) {
      EXPECT_NE(std::string(e.what()).find("CUDA asked for but " + availability().reason), std::string::npos)
          << e.what();
    }
  }
  try {
    require_device(Device::cuda, "trex train");
    FAIL() << "require_device(cuda) returned for a command that does not run on CUDA";
  } catch (const trex::Error& e) {
    const std::string m = e.what();
    if (!available()) {
      EXPECT_NE(m.find("trex train --device cuda: CUDA asked for but " + availability().reason), std::string::npos)
          << m;
    } else {
      EXPECT_NE(m.find("not implemented yet for this command"), std::string::npos) << m;
      EXPECT_NE(m.find(availability().name), std::string::npos) << m;
    }
  }
}

namespace {
// The message `trex <cmd> --device cuda` must stop with on this machine: with a device, the commands that run on
// CUDA in CUDA builds (train, run's training, generate and serve's decoder) go on to their missing input there.
std::string expected_device_error(const std::string& cmd) {
  if (!available()) return "error: trex " + cmd + " --device cuda: CUDA asked for but " + availability().reason;
  if (cmd == "train" && built_with_cuda()) return "/nonexistent/pack";
  if (cmd == "run" && built_with_cuda()) return "/dev/null/run";
  if ((cmd == "generate" || cmd == "serve") && built_with_cuda()) return "/nonexistent/ckpt";
  return "not implemented yet for this command";
}
}  // namespace

TEST(CudaDevice, TrainAndGenerateRefuseCudaWithTheReason) {
  const std::string bin = TREX_BIN_PATH;
  // The data / checkpoint paths do not exist: the device check comes first, before anything is read.
  const std::string train = bin + " train --device cuda --mode cpt --data /nonexistent/pack --out /nonexistent/out";
  const std::string gen = bin + " generate --device cuda --ckpt /nonexistent/ckpt --prompt hi";
  for (const auto& [cmd, line] : {std::pair{std::string("train"), train}, std::pair{std::string("generate"), gen}}) {
    int rc = 0;
    const std::string out = trex::testing::run_command(line, rc);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find(expected_device_error(cmd)), std::string::npos) << out;
  }
  // --device cpu is the default and goes on to the command's own work (here: the missing checkpoint).
  int rc = 0;
  const std::string out =
      trex::testing::run_command(bin + " generate --device cpu --ckpt /nonexistent/ckpt --prompt hi", rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_EQ(out.find("--device"), std::string::npos) << out;
  EXPECT_NE(out.find("/nonexistent/ckpt"), std::string::npos) << out;
  // Anything but cpu / cuda is refused by the parser.
  const std::string bad = trex::testing::run_command(bin + " generate --device gpu --ckpt x --prompt hi", rc);
  EXPECT_EQ(rc, 2) << bad;
  EXPECT_NE(bad.find("--device"), std::string::npos) << bad;
}

TEST(CudaDevice, ServeAndRunRefuseCudaWithTheReason) {
  const std::string bin = TREX_BIN_PATH;
  const std::filesystem::path tmp = trex::testing::fresh_temp_dir("trex_device_serve_run");
  const std::filesystem::path run_out = tmp / "run";
  // serve: the checkpoint does not exist and nothing is bound: the device check comes first.
  const std::string serve = bin + " serve --device cuda --ckpt /nonexistent/ckpt --port 0";
  // run: refused before the run folder is made (with a device it starts: then a folder it cannot make stops it).
  const std::string run =
      bin + " run --device cuda --quick --out " + (available() ? std::string("/dev/null/run") : run_out.string());
  for (const auto& [cmd, line] : {std::pair{std::string("serve"), serve}, std::pair{std::string("run"), run}}) {
    int rc = 0;
    const std::string out = trex::testing::run_command(line, rc);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find(expected_device_error(cmd)), std::string::npos) << out;
  }
  EXPECT_FALSE(std::filesystem::exists(run_out)) << "trex run --device cuda wrote " << run_out;
  // --device cpu (the default) goes on to the command's own work: serve to the missing checkpoint, run to making
  // its folder (here under a file, so that it fails at once instead of running the pipeline).
  int rc = 0;
  std::string out = trex::testing::run_command(bin + " serve --device cpu --ckpt /nonexistent/ckpt --port 0", rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_EQ(out.find("--device"), std::string::npos) << out;
  EXPECT_NE(out.find("/nonexistent/ckpt"), std::string::npos) << out;
  out = trex::testing::run_command(bin + " run --device cpu --quick --out /dev/null/run", rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_EQ(out.find("--device"), std::string::npos) << out;
  EXPECT_NE(out.find("/dev/null/run"), std::string::npos) << out;
  // Anything but cpu / cuda is refused by the parser, and run writes nothing.
  for (const std::string& line : {bin + " serve --device gpu --ckpt x --port 0",
                                  bin + " run --device gpu --quick --out " + run_out.string()}) {
    const std::string bad = trex::testing::run_command(line, rc);
    EXPECT_EQ(rc, 2) << bad;
    EXPECT_NE(bad.find("--device"), std::string::npos) << bad;
  }
  EXPECT_FALSE(std::filesystem::exists(run_out)) << "trex run --device gpu wrote " << run_out;
  // The help of both commands names the option.
  for (const std::string& cmd : {std::string("serve"), std::string("run")}) {
    out = trex::testing::run_command(bin + " " + cmd + " --help", rc);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("--device"), std::string::npos) << out;
  }
  std::filesystem::remove_all(tmp);
}

#if TREX_HAVE_CUDA
TEST(CudaDevice, CheckMacroNamesFileLineCallAndError) {
  // Device 1<<20 exists nowhere: without a driver the runtime says so, with one it says the device is invalid.
  const cudaError_t expected = cudaSetDevice(1 << 20);
  ASSERT_NE(expected, cudaSuccess);
  int line = 0;
  try {
    line = __LINE__ + 1;
    TREX_CUDA_CHECK(cudaSetDevice(1 << 20));
    FAIL() << "TREX_CUDA_CHECK did not throw";
  } catch (const trex::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("device_test.cpp:" + std::to_string(line) + ": cudaSetDevice(1 << 20) failed: "),
              std::string::npos) << m;
    EXPECT_NE(m.find(cudaGetErrorName(expected)), std::string::npos) << m;
    EXPECT_NE(m.find(cudaGetErrorString(expected)), std::string::npos) << m;
  }
}
#else
TEST(CudaDevice, BuiltWithoutCuda) { EXPECT_FALSE(built_with_cuda()); }
#endif

// `--matmul bf16` of generate and serve is the GPU decoder's: with the CPU decoder it is refused before the
// checkpoint is read; with --device cuda the device check comes first.
TEST(CudaDevice, GenerateAndServeTakeBf16ProductsOnlyOnTheGpu) {
  const std::string bin = TREX_BIN_PATH;
  for (const std::string cmd : {"generate --prompt hi", "serve --port 0"}) {
    int rc = 0;
    const std::string name = cmd.substr(0, cmd.find(' '));
    std::string out = trex::testing::run_command(bin + " " + cmd + " --matmul bf16 --ckpt /nonexistent/ckpt", rc);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find("trex " + name + " --matmul bf16: bf16 products are the GPU decoder's"), std::string::npos)
        << out;
    EXPECT_EQ(out.find("/nonexistent/ckpt"), std::string::npos) << out;
    out = trex::testing::run_command(bin + " " + cmd + " --matmul bf16 --device cuda --ckpt /nonexistent/ckpt", rc);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find(expected_device_error(name)), std::string::npos) << out;
    out = trex::testing::run_command(bin + " " + cmd + " --matmul fp16 --ckpt /nonexistent/ckpt", rc);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_NE(out.find("--matmul"), std::string::npos) << out;
  }
}
