// MPI start-up and error reporting for trex's distributed training: MPI_Init_thread(MPI_THREAD_MULTIPLE)
// (the watchdog thread may call MPI_Abort while the main thread is inside a collective), MPI_ERRORS_RETURN on
// every communicator so a failed call becomes a trex::Error naming the call, and MPI_Finalize at the end.
#pragma once
#include <mpi.h>

#include <string>

namespace trex::dist {

class MpiRuntime {
 public:
  // Initialises MPI unless already initialised (then it neither finalises). Throws trex::Error when the
  // library cannot provide MPI_THREAD_MULTIPLE.
  MpiRuntime(int* argc, char*** argv);
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  int world_rank() const { return rank_; }
  int world_size() const { return size_; }

 private:
  bool owns_ = false;
  int rank_ = 0, size_ = 1;
};

// Throws trex::Error("MPI <what> failed: <MPI's error string>") when rc is not MPI_SUCCESS.
void check_mpi(int rc, const char* what);

// Prints "trex: rank R: <message>" on stderr and aborts the whole job (every rank) with `code`.
[[noreturn]] void abort_job(const std::string& message, int code);

}  // namespace trex::dist
