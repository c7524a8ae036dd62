#include "cli/profile_directory.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "analysis/compare/run_set.h"
#include "cli/cli_error.h"
#include "common/posix_acl.h"
#include "common/profile_format.h"

namespace lockscope {
namespace fs = std::filesystem;

namespace {

bool holds_profiles(const fs::path& directory) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error))
    if (entry.path().extension() == format::kFileSuffix) return true;
  return false;
}

// The directory's access ACL as its extended attribute's value; "" when it has none.
std::string acl_of(const std::string& directory) {
  std::string value(256, '\0');
  for (;;) {
    const ssize_t size =
        getxattr(directory.c_str(), kPosixAclAccessAttribute, value.data(), value.size());
    if (size >= 0) return value.substr(0, static_cast<size_t>(size));
    if (errno != ERANGE) return {};
    value.resize(value.size() * 4);
  }
}

[[noreturn]] void not_writable(const std::string& directory, const std::string& why) {
  throw CliError(fmt::format("cannot write profiles to '{}': {}", directory, why),
                 "choose another directory with -o DIR");
}

}  // namespace

ProfileDirectoryAccess prepare_profile_directory(const std::string& directory) {
  std::error_code error;
  const fs::path path(directory);
  if (fs::exists(path, error) && !fs::is_directory(path, error))
    not_writable(directory, "it exists and is not a directory");
  // A set of runs (record --repeat: DIR/1 … DIR/N) is moved whole as well: a profile written
  // beside it, or runs of a new set among an older set's, would mix two experiments.
  const bool run_set = fs::is_directory(path, error) && compare::is_run_set(directory);
  if (fs::is_directory(path, error) && (holds_profiles(path) || run_set)) {
    const char* what = run_set ? "set of runs" : "profile";
    const fs::path old = directory + ".old";
    fs::remove_all(old, error);
    fs::rename(path, old, error);
    if (error)
      not_writable(directory, fmt::format("cannot move the previous {} to {}: {}", what,
                                          old.string(), error.message()));
    fmt::print(stderr, "lockscope: previous {} moved to {}\n", what, old.string());
  }
  fs::create_directories(path, error);
  if (error) not_writable(directory, error.message());
  // Access checks lie under some setups (root, ACLs, read-only mounts): try a real file.
  const std::string probe = (path / ".lockscope-write-test").string();
  const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) not_writable(directory, std::strerror(errno));
  close(fd);
  unlink(probe.c_str());
  ProfileDirectoryAccess access;
  struct stat status;
  if (stat(directory.c_str(), &status) == 0) {
    access.known = true;
    access.mode = status.st_mode & 07777;
    access.acl = acl_of(directory);
  }
  return access;
}

void restore_profile_directory(const std::string& directory, const ProfileDirectoryAccess& before) {
  if (!before.known || acl_of(directory) == before.acl) return;
  if (before.acl.empty())
    removexattr(directory.c_str(), kPosixAclAccessAttribute);
  else
    setxattr(directory.c_str(), kPosixAclAccessAttribute, before.acl.data(), before.acl.size(), 0);
  chmod(directory.c_str(), before.mode);  // an ACL's mask is the group's bits of the mode
}

}  // namespace lockscope
