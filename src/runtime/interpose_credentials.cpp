// The calls that change a process's user: setuid, seteuid, setreuid, setresuid, interposed. A
// server started as root drops to its own user (nginx's workers become www-data) and can then no
// longer create files in a profile directory root made: its profile was lost at exit ("cannot
// write profile ...: Permission denied", on the server's own error log), and the report showed
// the master alone, with no word of its workers. Before the real call, while the process still
// may, its profile file is created under its final name and kept open (close-on-exec): the
// writer writes it in place when the directory refuses its temporary file (profile_writer.cpp).
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <initializer_list>

#include "runtime/cancellation.h"
#include "runtime/directory_grant.h"
#include "runtime/errno_guard.h"
#include "runtime/interpose.h"
#include "runtime/open_at_descriptor_limit.h"
#include "runtime/profile_writer.h"
#include "runtime/runtime_state.h"

namespace {

using lockscope::runtime::RuntimeStatus;

// Called by before_user_change, which has checked that the runtime is ready and made the call no
// cancellation point.
void keep_profile_file() {
  auto& rt = lockscope::runtime::runtime();
  if (static_cast<uint32_t>(getpid()) != rt.pid || rt.kept_profile_fd >= 0 || !rt.directory[0])
    return;
  const lockscope::runtime::ErrnoGuard keep_errno;
  char path[4096];
  if (lockscope::runtime::profile_path(path)) {
    const int fd =
        lockscope::runtime::open_at_descriptor_limit(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    const lockscope::runtime::FileIdentity identity = lockscope::runtime::FileIdentity::of(fd);
    if (fd >= 0 && fchmod(fd, 0644) == 0 && identity.known) {
      rt.kept_profile = identity;
      rt.kept_profile_fd = fd;
    } else if (fd >= 0) {
      close(fd);
    }
  }
}

// Before a change to the users in `uids` (-1: unchanged).
void before_user_change(std::initializer_list<uid_t> uids) {
  if (lockscope::runtime::runtime().status.load(std::memory_order_acquire) !=
      static_cast<int>(RuntimeStatus::kReady))
    return;
  lockscope::runtime::NoCancellation no_cancellation;  // setuid is no cancellation point
  for (uid_t uid : uids) lockscope::runtime::grant_profile_directory(uid);
  keep_profile_file();
}

template <typename Function>
Function next(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

}  // namespace

LOCKSCOPE_EXPORT int setuid(uid_t uid) {
  static auto real = next<int (*)(uid_t)>("setuid");
  before_user_change({uid});
  return real(uid);
}

LOCKSCOPE_EXPORT int seteuid(uid_t euid) {
  static auto real = next<int (*)(uid_t)>("seteuid");
  before_user_change({euid});
  return real(euid);
}

LOCKSCOPE_EXPORT int setreuid(uid_t ruid, uid_t euid) {
  static auto real = next<int (*)(uid_t, uid_t)>("setreuid");
  before_user_change({ruid, euid});
  return real(ruid, euid);
}

LOCKSCOPE_EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid) {
  static auto real = next<int (*)(uid_t, uid_t, uid_t)>("setresuid");
  before_user_change({ruid, euid, suid});
  return real(ruid, euid, suid);
}
