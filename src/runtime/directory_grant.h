// A process that gives up root (setuid and its kin) can no longer create files in the profile
// directory root made, and neither can its children nor the programs it execs: a server that drops
// to its own user and then forks its workers (postgres started by `runuser`, `su` or `sudo -u`)
// lost every profile but the first process's. Before the real call, while the process still may,
// the directory's ACL grants the user it becomes the right to create files there
// (system.posix_acl_access, as setfacl -m u:UID:rwx would, the mask widened to rwx); lockscope
// restores the directory's mode and ACL when the run ends. On a file system without ACLs nothing
// changes: the dropping process still writes the file it keeps open (interpose_credentials.cpp).
#pragma once

#include <stdint.h>

namespace lockscope::runtime {

// Lets `uid` create files in the profile directory, when the process is root; nothing for -1 or
// root itself.
void grant_profile_directory(uint32_t uid);

}  // namespace lockscope::runtime
