// AtomicFile: committed files appear whole; abandoned writes leave nothing behind.
#include <gtest/gtest.h>

#include <filesystem>

#include "util/atomic_file.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;

TEST(AtomicFile, CommitReplacesTarget) {
  fs::path dir = fs::temp_directory_path() / "trex_atomic_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path p = dir / "out.txt";
  trex::write_file_atomic(p, "first");
  trex::write_file_atomic(p, "second");
  EXPECT_EQ(trex::read_file(p), "second");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(AtomicFile, AbandonedWriteLeavesOldContent) {
  fs::path dir = fs::temp_directory_path() / "trex_atomic_test2";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path p = dir / "out.txt";
  trex::write_file_atomic(p, "old");
  {
    trex::AtomicFile f(p);
    f.write("half-written");
  }  // no commit
  EXPECT_EQ(trex::read_file(p), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(AtomicFile, MissingFolderIsAnError) {
  EXPECT_THROW(trex::write_file_atomic("/nonexistent_dir_trex/x.txt", "x"), trex::Error);
  EXPECT_THROW(trex::read_file("/nonexistent_dir_trex/x.txt"), trex::Error);
}
