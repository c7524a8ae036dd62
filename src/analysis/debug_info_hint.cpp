#include "analysis/debug_info_hint.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace lockscope {
namespace {

// dpkg-query -S PATH's package ("git: /usr/bin/git" -> "git"), without a shell.
std::optional<std::string> query_owner(const std::string& path) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  const char* argv[] = {"dpkg-query", "-S", path.c_str(), nullptr};
  pid_t child = 0;
  const int spawned = posix_spawnp(&child, "dpkg-query", &actions, nullptr,
                                   const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return std::nullopt;
  }
  close(pipe_fds[1]);
  std::string output;
  std::array<char, 512> buffer;
  ssize_t got;
  while ((got = read(pipe_fds[0], buffer.data(), buffer.size())) > 0 && output.size() < 65536)
    output.append(buffer.data(), static_cast<size_t>(got));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  // "pkg: /path" or "pkg:amd64: /path" (diversions first add "diversion by ..." lines): the
  // first package line's package.
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(start, end - start);
    start = end + 1;
    if (line.rfind("diversion by ", 0) == 0) continue;
    const size_t colon = line.find(": ");
    if (colon == std::string::npos || colon == 0) continue;
    std::string package = line.substr(0, colon);
    if (const size_t comma = package.find(", "); comma != std::string::npos) package.resize(comma);
    if (const size_t arch = package.find(':'); arch != std::string::npos) package.resize(arch);
    if (package.empty() || package.find(' ') != std::string::npos) continue;
    return package;
  }
  return std::nullopt;
}

// The release's codename (VERSION_CODENAME in /etc/os-release), "bookworm" if not said.
std::string debian_codename() {
  std::ifstream release("/etc/os-release");
  std::string line;
  while (std::getline(release, line))
    if (line.rfind("VERSION_CODENAME=", 0) == 0 && line.size() > 17) return line.substr(17);
  return "bookworm";
}

}  // namespace

std::optional<std::string> debian_package_owning(const std::string& path) {
  if (path.empty() || path.front() != '/') return std::nullopt;
  // Packages install code under these alone: a program of one's own build (/home, /work, /tmp)
  // is nobody's, and asking dpkg (up to three times, ~60 ms each) would only say so.
  std::error_code error;
  const std::filesystem::path canonical = std::filesystem::canonical(path, error);
  const auto packaged = [](const std::string& file) {
    for (const char* root : {"/usr/", "/bin/", "/sbin/", "/lib", "/opt/"})
      if (file.rfind(root, 0) == 0) return true;
    return false;
  };
  if (!packaged(path) && (error || !packaged(canonical.string()))) return std::nullopt;
  if (auto package = query_owner(path)) return package;
  // Merged /usr: the file may be listed under the other name (/bin/x for /usr/bin/x, or back).
  if (!error && canonical.string() != path)
    if (auto package = query_owner(canonical.string())) return package;
  if (path.rfind("/usr/", 0) == 0) return query_owner(path.substr(4));
  return query_owner("/usr" + path);
}

std::string debug_info_hint(const DebugInfoHintInput& input, const PackageLookup& owner) {
  if (input.sites_with_lines > 0)
    return fmt::format(
        "no line information at these addresses, though {} other call site{} of "
        "this module have file:line (code built without -g there: a static "
        "library, the C runtime's start files, hand-written assembly)",
        input.sites_with_lines, input.sites_with_lines == 1 ? "" : "s");
  std::string hint = "no debug info found";
  if (input.build_id_hex.empty()) {
    hint +=
        " (and it has no build-id, so no debuginfod server can find it: rebuild with -g, or "
        "with -Wl,--build-id and serve the -g build)";
  } else if (!input.debuginfod_urls.empty()) {
    hint += fmt::format(
        " (build-id {}; DEBUGINFOD_URLS is set, to {}, but no debug info came "
        "from there for that build-id)",
        input.build_id_hex, input.debuginfod_urls);
  } else {
    hint += fmt::format(" (build-id {}): report again with DEBUGINFOD_URLS={}", input.build_id_hex,
                        kDebianDebuginfodUrl);
  }
  if (const std::optional<std::string> package = owner(input.module_path)) {
    hint += fmt::format(
        ", or install {}-dbgsym from Debian's debug archive (add `deb http://deb.debian.org/"
        "debian-debug/ {}-debug main` to /etc/apt/sources.list.d/, then apt-get update)",
        *package, debian_codename());
  } else if (!input.build_id_hex.empty()) {
    hint += ", or point DEBUGINFOD_URLS at a debuginfod server of your own builds";
  }
  return hint;
}

}  // namespace lockscope
