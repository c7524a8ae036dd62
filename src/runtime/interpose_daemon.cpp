// daemon(3), interposed. glibc's ends the parent with its own internal _exit, which no
// interposition sees: the parent's profile was never written, its running marker never handed
// its child over (running_marker.h), and lockscope stopped waiting before the daemon had made its
// own (it reported "no profile was written ... killed by SIGKILL" and the daemon's profile came
// later, unread). The same steps as glibc 2.36's, through the public calls: the parent then ends
// through the interposed _exit, which writes its profile and hands the daemon over.
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "runtime/cancellation.h"
#include "runtime/interpose.h"

LOCKSCOPE_EXPORT int daemon(int nochdir, int noclose) {
  switch (fork()) {
    case -1:
      return -1;
    case 0:
      break;
    default:
      _exit(0);
  }
  if (setsid() == -1) return -1;
  if (!nochdir) (void)chdir("/");
  if (noclose) return 0;
  // glibc opens and closes without cancellation points: daemon() is none.
  lockscope::runtime::NoCancellation no_cancellation;
  const int fd = open("/dev/null", O_RDWR);
  if (fd == -1) return -1;
  struct stat status;
  if (fstat(fd, &status) != 0) {
    close(fd);
    return -1;
  }
  // Only the real /dev/null (Linux: character device 1, 3), as glibc checks.
  if (!S_ISCHR(status.st_mode) || status.st_rdev != makedev(1, 3)) {
    close(fd);
    errno = ENODEV;
    return -1;
  }
  (void)dup2(fd, STDIN_FILENO);
  (void)dup2(fd, STDOUT_FILENO);
  (void)dup2(fd, STDERR_FILENO);
  if (fd > 2) close(fd);
  return 0;
}
