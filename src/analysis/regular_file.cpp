#include "analysis/regular_file.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lockscope {
namespace {

const char* file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

}  // namespace

RegularFile::~RegularFile() {
  if (fd_ >= 0) close(fd_);
}

std::string RegularFile::open(const std::string& path) {
  if (fd_ >= 0) close(fd_);
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) return fmt::format("cannot open: {}", std::strerror(errno));
  struct stat status {};
  if (fstat(fd_, &status) != 0) {
    const int error = errno;
    close(fd_);
    fd_ = -1;
    return fmt::format("cannot open: {}", std::strerror(error));
  }
  if (!S_ISREG(status.st_mode)) {
    close(fd_);
    fd_ = -1;
    return fmt::format("not a regular file ({})", file_type_name(status.st_mode));
  }
  size_ = static_cast<uint64_t>(status.st_size);
  return {};
}

std::string RegularFile::read_all(std::string& bytes) {
  bytes.resize(static_cast<size_t>(size_));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::read(fd_, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return fmt::format("cannot read: {}", std::strerror(errno));
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  bytes.resize(done);
  return {};
}

int RegularFile::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

std::string byte_size_text(uint64_t bytes) {
  constexpr uint64_t kGiB = uint64_t{1} << 30, kMiB = uint64_t{1} << 20;
  if (bytes >= kGiB) return fmt::format("{:g} GiB", double(bytes) / double(kGiB));
  if (bytes >= kMiB) return fmt::format("{:g} MiB", double(bytes) / double(kMiB));
  return fmt::format("{} bytes", bytes);
}

}  // namespace lockscope
