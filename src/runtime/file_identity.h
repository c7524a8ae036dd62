// Which file a descriptor is (its device and inode), to check later that the descriptor still is
// that file: a program may close a descriptor the runtime keeps, or its own stderr, and open a file
// of its own that takes the same number (the runtime's log line went into a program's data). All
// zero: not known. fstat is async-signal-safe.
#pragma once

#include <sys/stat.h>

#include <cstdint>

namespace lockscope::runtime {

struct FileIdentity {
  uint64_t device;
  uint64_t inode;
  bool known;

  // The file `fd` is now; not known when the descriptor is closed.
  static FileIdentity of(int fd) {
    struct stat status;
    if (fstat(fd, &status) != 0) return FileIdentity{0, 0, false};
    return FileIdentity{status.st_dev, status.st_ino, true};
  }
  // Whether `fd` still is this file.
  bool is(int fd) const {
    if (!known) return false;
    const FileIdentity now = of(fd);
    return now.known && now.device == device && now.inode == inode;
  }
};

}  // namespace lockscope::runtime
