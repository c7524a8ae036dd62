// The extended attribute that holds a directory's POSIX access ACL: the runtime adds the user a
// process becomes to the profile directory's (runtime/directory_grant.h), and the CLI puts it back
// as it was when the run ends (cli/profile_directory.h).
#pragma once

namespace lockscope {

inline constexpr char kPosixAclAccessAttribute[] = "system.posix_acl_access";

}  // namespace lockscope
