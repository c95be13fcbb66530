// MpiProcessGroup::all_gather_ranges (ZeRO-1's all-gather of updated weight shards) under mpirun: the in-place
// MPI_Allgatherv and the piecewise broadcasts it falls back to past MPI's int offsets give every rank every range,
// for uneven ranges, an empty one and a range that is not a multiple of the piece. The test runs this binary again
// under `mpirun -np 3` (TREX_MPI_GATHER_CHILD set), where each rank checks both paths.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "dist/mpi_process_group.hpp"
#include "dist/mpi_run.hpp"
#include "dist/mpi_runtime.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace {

using namespace trex_dist_test;

// Rank r's floats: r * 1000 + j at index j of its range; NaN elsewhere until the gather fills it.
std::vector<float> own_range_only(int rank, const std::vector<int64_t>& displs, const std::vector<int64_t>& counts,
                                  int64_t total) {
  std::vector<float> data(size_t(total), std::numeric_limits<float>::quiet_NaN());
  for (int64_t j = 0; j < counts[size_t(rank)]; ++j) data[size_t(displs[size_t(rank)] + j)] = float(rank * 1000 + j);
  return data;
}

// Every float of the buffer is its owner's value (the ranges cover [0, total) here).
int64_t wrong_floats(const std::vector<float>& data, const std::vector<int64_t>& displs,
                     const std::vector<int64_t>& counts) {
  int64_t wrong = 0;
  for (size_t r = 0; r < counts.size(); ++r)
    for (int64_t j = 0; j < counts[r]; ++j)
      if (data[size_t(displs[r] + j)] != float(int64_t(r) * 1000 + j)) ++wrong;
  return wrong;
}

void child() {
  int argc = 0;
  char** argv = nullptr;
  trex::dist::MpiRuntime mpi(&argc, &argv);
  trex::dist::MpiProcessGroup g(MPI_COMM_WORLD);
  ASSERT_EQ(g.size(), 3);
  const std::vector<int64_t> displs = {0, 300, 300}, counts = {300, 0, 701};  // rank 1's shard is empty
  const int64_t total = 1001;
  auto whole = own_range_only(g.rank(), displs, counts, total);
  g.all_gather_ranges(whole, displs, counts);  // one MPI_Allgatherv
  EXPECT_EQ(wrong_floats(whole, displs, counts), 0) << "rank " << g.rank() << ", MPI_Allgatherv";
  auto pieces = own_range_only(g.rank(), displs, counts, total);
  g.set_gather_span_floats(7);  // past 7 floats: the owners' ranges broadcast 7 at a time
  g.all_gather_ranges(pieces, displs, counts);
  EXPECT_EQ(wrong_floats(pieces, displs, counts), 0) << "rank " << g.rank() << ", piecewise broadcasts";
  // a range outside the buffer is refused before any communication, on every rank alike
  const std::vector<int64_t> past = {0, 300, 300}, too_long = {300, 0, 702};
  EXPECT_THROW(g.all_gather_ranges(pieces, past, too_long), trex::Error);
}

TEST(MpiGather, AllgathervAndPiecewiseBroadcastsGiveEveryRankEveryRange) {
  if (std::getenv("TREX_MPI_GATHER_CHILD")) {
    child();
    return;
  }
  const fs::path dir = temp_dir("gather");
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const fs::path log = dir / "child.log";
  const std::string cmd = "TREX_MPI_GATHER_CHILD=1 " + mpirun_prefix(3) + "-x TREX_MPI_GATHER_CHILD " +
                          fs::read_symlink("/proc/self/exe").string() + " --gtest_color=no " +
                          "--gtest_filter=MpiGather.AllgathervAndPiecewiseBroadcastsGiveEveryRankEveryRange > " +
                          log.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  const std::string out = trex::read_file(log);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out.find("FAILED"), std::string::npos) << out;
  size_t passed = 0;  // each of the three ranks ran the test and passed it
  for (size_t at = out.find("[  PASSED  ] 1 test"); at != std::string::npos; at = out.find("[  PASSED  ] 1 test", at + 1))
    ++passed;
  EXPECT_EQ(passed, 3u) << out;
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
