// Read-only memory mapping of a whole file (POSIX mmap), for token shards and packed sequences.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace trex::text {

class MappedFile {
 public:
  MappedFile() = default;
  explicit MappedFile(const std::filesystem::path& path);  // throws trex::Error naming the path
  ~MappedFile();
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&& o) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  void release();
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace trex::text
