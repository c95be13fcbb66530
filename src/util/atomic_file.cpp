// AtomicFile: temp + fsync + rename.
#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "util/error.hpp"

namespace trex {
namespace fs = std::filesystem;

AtomicFile::AtomicFile(fs::path target) : target_(std::move(target)) {
  fs::path dir = target_.parent_path();
  if (dir.empty()) dir = ".";
  std::string tmpl = (dir / ("." + target_.filename().string() + ".tmp.XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw Error(SourceLocation{target_.string()}, std::string("cannot create temporary file: ") + std::strerror(errno));
  temp_ = tmpl;
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    ::close(fd);
    fs::remove(temp_);
    throw Error(SourceLocation{target_.string()}, "cannot open temporary file");
  }
}

AtomicFile::~AtomicFile() {
  if (file_) std::fclose(file_);
  if (!committed_) {
    std::error_code ec;
    fs::remove(temp_, ec);
  }
}

void AtomicFile::write(std::string_view bytes) {
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    throw Error(SourceLocation{target_.string()}, std::string("write failed: ") + std::strerror(errno));
}

void AtomicFile::commit() {
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0)
    throw Error(SourceLocation{target_.string()}, std::string("flush failed: ") + std::strerror(errno));
  std::fclose(file_);
  file_ = nullptr;
  std::error_code ec;
  fs::rename(temp_, target_, ec);
  if (ec) throw Error(SourceLocation{target_.string()}, "rename failed: " + ec.message());
  committed_ = true;
  fs::path dir = target_.parent_path();
  if (dir.empty()) dir = ".";
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomic(const fs::path& target, std::string_view bytes) {
  AtomicFile f(target);
  f.write(bytes);
  f.commit();
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(SourceLocation{path.string()}, std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(SourceLocation{path.string()}, "read failed");
  return std::move(ss).str();
}

}  // namespace trex
