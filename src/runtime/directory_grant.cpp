#include "runtime/directory_grant.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/posix_acl.h"
#include "runtime/errno_guard.h"
#include "runtime/runtime_state.h"

namespace lockscope::runtime {
namespace {

// The kernel's POSIX ACL as an extended attribute (linux/posix_acl_xattr.h): a version, then
// entries sorted by tag and, within ACL_USER and ACL_GROUP, by id.
constexpr uint32_t kAclVersion = 2;
constexpr uint16_t kUserObject = 0x01, kUser = 0x02, kGroupObject = 0x04, kMask = 0x10,
                   kOther = 0x20;
constexpr uint16_t kReadWriteSearch = 7;
constexpr uint32_t kNoId = 0xffffffffu;

struct AclEntry {
  uint16_t tag;
  uint16_t permissions;
  uint32_t id;
};

constexpr size_t kMaxEntries = 64;

struct Acl {
  uint32_t version;
  AclEntry entries[kMaxEntries];
};

bool sorts_before(const AclEntry& a, const AclEntry& b) {
  return a.tag != b.tag ? a.tag < b.tag : a.id < b.id;
}

// `acl` with an ACL_USER entry for `uid` allowed rwx, and the mask widened to let it act.
// False when the ACL is full.
bool add_user(Acl& acl, size_t& count, uint32_t uid) {
  bool masked = false;
  for (size_t i = 0; i < count; ++i) {
    if (acl.entries[i].tag == kUser && acl.entries[i].id == uid) {
      acl.entries[i].permissions = kReadWriteSearch;
      uid = kNoId;
    }
    if (acl.entries[i].tag == kMask) {
      acl.entries[i].permissions = kReadWriteSearch;
      masked = true;
    }
  }
  const AclEntry added[2] = {{kUser, kReadWriteSearch, uid}, {kMask, kReadWriteSearch, kNoId}};
  for (const AclEntry& entry : added) {
    if ((entry.tag == kUser && uid == kNoId) || (entry.tag == kMask && masked)) continue;
    if (count == kMaxEntries) return false;
    size_t at = count;
    while (at > 0 && sorts_before(entry, acl.entries[at - 1])) {
      acl.entries[at] = acl.entries[at - 1];
      --at;
    }
    acl.entries[at] = entry;
    ++count;
  }
  return true;
}

}  // namespace

void grant_profile_directory(uint32_t uid) {
  Runtime& rt = runtime();
  // Only root's grant is one the call can follow: a program that tries setuid and falls back on
  // EPERM must not have opened its directory to another user.
  if (!rt.directory[0] || uid == kNoId || geteuid() != 0 || uid == 0) return;
  const ErrnoGuard keep_errno;
  Acl acl{};
  size_t count = 0;
  const ssize_t size = getxattr(rt.directory, kPosixAclAccessAttribute, &acl, sizeof(acl));
  if (size >= static_cast<ssize_t>(sizeof(uint32_t) + sizeof(AclEntry)) &&
      acl.version == kAclVersion) {
    count = (static_cast<size_t>(size) - sizeof(uint32_t)) / sizeof(AclEntry);
  } else if (size < 0 && errno == ENODATA) {
    // No ACL yet: the mode's three classes, as the kernel reads them.
    struct stat status;
    if (stat(rt.directory, &status) != 0) return;
    const uint16_t mode = static_cast<uint16_t>(status.st_mode);
    acl.version = kAclVersion;
    acl.entries[0] = {kUserObject, static_cast<uint16_t>((mode >> 6) & 7), kNoId};
    acl.entries[1] = {kGroupObject, static_cast<uint16_t>((mode >> 3) & 7), kNoId};
    acl.entries[2] = {kOther, static_cast<uint16_t>(mode & 7), kNoId};
    count = 3;
  } else {
    return;  // unreadable, or a file system without ACLs: the kept file is all
  }
  if (add_user(acl, count, uid))
    setxattr(rt.directory, kPosixAclAccessAttribute, &acl,
             sizeof(uint32_t) + count * sizeof(AclEntry), 0);
}

}  // namespace lockscope::runtime
