// Atomic file writes: content goes to a temporary file in the target's folder, is fsync'ed, then
// renamed over the target, so a reader (or a crash) never sees a half-written file.
#pragma once
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace trex {

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();  // removes the temporary file unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view bytes);
  std::FILE* handle() { return file_; }  // for bulk writers (fwrite); do not fclose
  void commit();                          // flush + fsync + rename (+ fsync of the folder)
  const std::filesystem::path& target() const { return target_; }

 private:
  std::filesystem::path target_, temp_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

void write_file_atomic(const std::filesystem::path& target, std::string_view bytes);
std::string read_file(const std::filesystem::path& path);  // throws trex::Error naming the path

}  // namespace trex
