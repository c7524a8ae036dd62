// Opening a file the report reads (a profile, a trace, a module to symbolize) so that no file can
// hang or exhaust the report: whatever the path names — a directory, a FIFO, a device, a symlink
// to /dev/zero, a sparse file of terabytes — the caller gets either an open regular file of a
// known size or a one-line reason, at once.
//
// Why not O_NOFOLLOW: users link profiles and debug files into place, and a symlink to a regular
// file is as safe to read as the file itself. What is refused is the *target*: the file is opened
// with O_NONBLOCK (a FIFO's open() returns at once instead of waiting for a writer), then fstat()
// on the open descriptor — not stat() on the path, which could change in between — must say
// S_ISREG.
#pragma once

#include <cstdint>
#include <string>

namespace lockscope {

class RegularFile {
 public:
  RegularFile() = default;
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  // "" when opened; else why not: "cannot open: <strerror>", "not a regular file (a FIFO)".
  std::string open(const std::string& path);
  // The whole file as fstat() sized it (check size() against a limit first); "" when read, else
  // why not. A file that grows meanwhile is read to that size, one that shrinks comes up short.
  std::string read_all(std::string& bytes);
  // Gives up the descriptor (-1 if none) to a caller that closes it.
  int release();

  int fd() const { return fd_; }
  uint64_t size() const { return size_; }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

// "1.5 GiB", "4 GiB", "812 bytes": for the size limits' messages.
std::string byte_size_text(uint64_t bytes);

}  // namespace lockscope
