// MappedFile: open + fstat + mmap(PROT_READ, MAP_PRIVATE).
#include "text/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.hpp"

namespace trex::text {

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path.string()) {
  int fd = ::open(path_.c_str(), O_RDONLY);
  if (fd < 0) throw Error(SourceLocation{path_}, std::string("cannot open file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw Error(SourceLocation{path_}, std::string("cannot stat file: ") + std::strerror(errno));
  }
  size_ = size_t(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw Error(SourceLocation{path_}, std::string("cannot map file: ") + std::strerror(errno));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

void MappedFile::release() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_), path_(std::move(o.path_)) {
  o.data_ = nullptr;
  o.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    release();
    data_ = o.data_;
    size_ = o.size_;
    path_ = std::move(o.path_);
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

}  // namespace trex::text
