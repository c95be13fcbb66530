// MPI start-up and error reporting (see mpi_runtime.hpp).
#include "dist/mpi_runtime.hpp"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "util/error.hpp"

namespace trex::dist {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, buf, &len) != MPI_SUCCESS) len = std::snprintf(buf, sizeof buf, "error code %d", rc);
  throw Error(fmt::format("MPI {} failed: {}", what, std::string(buf, size_t(len))));
}

MpiRuntime::MpiRuntime(int* argc, char*** argv) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  int provided = 0;
  if (!initialised) {
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
      throw Error("MPI_Init_thread failed (is this an Open MPI build? run under mpirun)");
    owns_ = true;
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_MULTIPLE)
    throw Error(fmt::format("MPI provides thread level {} but trex needs MPI_THREAD_MULTIPLE ({})", provided,
                            int(MPI_THREAD_MULTIPLE)));
  check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size_), "Comm_size");
}

MpiRuntime::~MpiRuntime() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

void abort_job(const std::string& message, int code) {
  int rank = -1, initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "trex: rank %d: %s\n", rank, message.c_str());
  std::fflush(stderr);
  if (initialised) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace trex::dist
