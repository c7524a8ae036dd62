// The profile directory of `record`/`run`: created if needed and checked writable before the
// program starts (so a long run never ends in "cannot write"); an existing profile there is moved
// to DIR.old, like perf.data -> perf.data.old, so two runs never mix and nothing is silently lost;
// so is a set of runs there (record --repeat, analysis/compare/run_set.h), whole.
//
// A profiled process that gives up root grants its new user an ACL entry on the directory
// (runtime/directory_grant.h); when the run ends, the directory's access (its mode and its ACL,
// byte for byte) is restored to what it was before the run.
#pragma once

#include <sys/types.h>

#include <string>

namespace lockscope {

struct ProfileDirectoryAccess {
  bool known = false;  // the directory could be read: mode and acl are what it had
  mode_t mode = 0;     // permission bits
  std::string acl;     // its access ACL as the system.posix_acl_access value ("": none)
};

ProfileDirectoryAccess prepare_profile_directory(const std::string& directory);
void restore_profile_directory(const std::string& directory, const ProfileDirectoryAccess& before);

}  // namespace lockscope
