// Sandbox: untrusted programs that loop, allocate, fork, open sockets or write outside their folder
// are stopped or refused, and the caller gets a result every time.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "oreval/sandbox.hpp"
#include "sandbox_test_util.hpp"
#include "util/atomic_file.hpp"

namespace fs = std::filesystem;
using trex::oreval::run_sandboxed;
using trex::oreval::SandboxSpec;

namespace {

struct SandboxDir : trex::oreval::testing::TempDir {
  SandboxDir() : trex::oreval::testing::TempDir("trex_sbx_test_") {}
};

SandboxSpec python(const SandboxDir& dir, const std::string& code, double wall = 20, double cpu = 10) {
  return trex::oreval::testing::python_spec(dir, code, {"PATH=/usr/bin:/bin"}, wall, cpu);
}

}  // namespace

TEST(Sandbox, RunsProgramAndCapturesOutput) {
  SandboxDir d;
  auto r = run_sandboxed(python(d, "import sys\nprint('hello')\nprint('err', file=sys.stderr)\nopen('out.txt','w').write('x')\n"));
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_EQ(r.exit_code, 0) << r.stderr_data;
  EXPECT_EQ(r.stdout_data, "hello\n");
  EXPECT_EQ(r.stderr_data, "err\n");
  EXPECT_TRUE(fs::exists(d.path / "out.txt"));  // its own folder is writable
  EXPECT_TRUE(r.ok());
}

TEST(Sandbox, NonZeroExitIsReported) {
  SandboxDir d;
  auto r = run_sandboxed(python(d, "raise SystemExit(3)\n"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
}

TEST(Sandbox, InfiniteLoopHitsCpuLimit) {
  SandboxDir d;
  auto r = run_sandboxed(python(d, "while True:\n    pass\n", /*wall=*/20, /*cpu=*/1));
  ASSERT_TRUE(r.started);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.cpu_limit || r.term_signal != 0 || r.timed_out);
  EXPECT_LT(r.wall_seconds, 15.0);
}

TEST(Sandbox, SleepingProgramHitsWallLimit) {
  SandboxDir d;
  auto r = run_sandboxed(python(d, "import time\ntime.sleep(60)\n", /*wall=*/1));
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(r.wall_seconds, 5.0);
}

TEST(Sandbox, UnboundedAllocationIsStopped) {
  SandboxDir d;
  auto r = run_sandboxed(python(d, "x = []\nwhile True:\n    x.append(bytearray(50_000_000))\n"));
  ASSERT_TRUE(r.started);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.timed_out);
}

TEST(Sandbox, ForkBombIsContained) {
  SandboxDir d;
  auto r = run_sandboxed(python(d, "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n", /*wall=*/3, /*cpu=*/3));
  ASSERT_TRUE(r.started);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(r.wall_seconds, 10.0);
  // Nothing of it survives: no process still runs from its folder.
  int survivors = 0;
  for (auto& e : fs::directory_iterator("/proc")) {
    std::error_code ec;
    auto cwd = fs::read_symlink(e.path() / "cwd", ec);
    if (!ec && cwd == fs::canonical(d.path)) ++survivors;
  }
  EXPECT_EQ(survivors, 0);
}

TEST(Sandbox, NoNetwork) {
  int srv = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(srv, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ASSERT_EQ(::bind(srv, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(srv, 4), 0);
  socklen_t len = sizeof a;
  ::getsockname(srv, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  SandboxDir d;
  auto r = run_sandboxed(python(d, "import socket\ns = socket.create_connection(('127.0.0.1', " + std::to_string(port) +
                                       "), timeout=3)\nprint('connected')\n"));
  ::close(srv);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data.find("connected"), std::string::npos);
}

TEST(Sandbox, WritesOutsideItsFolderAreRefused) {
  SandboxDir d;
  fs::path outside = fs::temp_directory_path() / ("trex_sbx_escape_" + std::to_string(::getpid()));
  fs::remove(outside);
  auto r = run_sandboxed(python(d, "open('" + outside.string() + "', 'w').write('escaped')\n"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(outside));
  fs::remove(outside);
}

TEST(Sandbox, BadSpecIsAnErrorNotACrash) {
  SandboxSpec s;
  s.argv = {"python3"};
  s.workdir = "/";
  auto r = run_sandboxed(s);
  EXPECT_FALSE(r.started);
  EXPECT_FALSE(r.error.empty());
  s.argv = {"/usr/bin/python3"};
  s.workdir = "/nonexistent/trex";
  r = run_sandboxed(s);
  EXPECT_FALSE(r.started);
}

TEST(Sandbox, MissingExecutableFailsCleanly) {
  SandboxDir d;
  SandboxSpec s;
  s.argv = {"/nonexistent/binary"};
  s.workdir = d.path;
  auto r = run_sandboxed(s);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(r.ok());
}

TEST(Sandbox, RootGetsFullIsolation) {
  if (::geteuid() != 0) GTEST_SKIP() << "full isolation needs root; rlimit fallback tested above";
  SandboxDir d;
  auto r = run_sandboxed(python(d, "print(1)\n"));
  auto has = [&](const char* p) { return std::find(r.protections.begin(), r.protections.end(), p) != r.protections.end(); };
  EXPECT_TRUE(has("pid-namespace"));
  EXPECT_TRUE(has("no-network"));
  EXPECT_TRUE(has("read-only-fs"));
  EXPECT_TRUE(has("cgroup-pids"));
  EXPECT_TRUE(has("no-capabilities"));
}

// A sandbox must not keep descriptors it inherited from other threads: the namespace's init never execs, so
// close-on-exec alone would leave open, until its program ends, the pipes another thread had just made for its
// own sandbox, and that quick answer would wait for (and time out with) this slow one. The pipe made here
// stands for the other thread's.
TEST(Sandbox, DoesNotHoldDescriptorsOfOtherThreads) {
  int other[2];
  ASSERT_EQ(::pipe2(other, O_CLOEXEC), 0);
  SandboxDir d;
  std::thread slow([&] { (void)run_sandboxed(python(d, "import time\ntime.sleep(4)\n", /*wall=*/8)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the sandbox has started its program
  ::close(other[1]);
  struct pollfd p{other[0], POLLIN, 0};
  auto t0 = std::chrono::steady_clock::now();
  int n = ::poll(&p, 1, 3000);  // EOF as soon as the last write end is gone
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  slow.join();
  ::close(other[0]);
  EXPECT_EQ(n, 1) << "the write end stayed open in the sandbox for " << waited << " s";
  EXPECT_LT(waited, 1.0);
}
