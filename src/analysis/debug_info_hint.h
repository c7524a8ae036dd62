// What to do about a module whose call sites have no file:line: the exact way to its debug info on
// Debian. Names the build-id (what a debuginfod server is asked for) or says there is none, the
// DEBUGINFOD_URLS setting for Debian's public server (or that it is set and found nothing), and the
// -dbgsym package of the Debian package that owns the file, with the archive line that provides it.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace lockscope {

struct DebugInfoHintInput {
  std::string module_path;
  std::string build_id_hex;     // empty: the module has no build-id note
  std::string debuginfod_urls;  // DEBUGINFOD_URLS when the report ran (empty: not set)
  size_t sites_with_lines = 0;  // call sites of the same module that have file:line
};

// The Debian package that owns `path` (dpkg-query -S), or nullopt when none does or dpkg is absent
// (at once for a path outside /usr, /bin, /sbin, /lib*, /opt, where no package installs code).
using PackageLookup = std::function<std::optional<std::string>(const std::string& path)>;
std::optional<std::string> debian_package_owning(const std::string& path);

// One line, without the leading "N call sites in MODULE without file:line: ".
std::string debug_info_hint(const DebugInfoHintInput& input,
                            const PackageLookup& owner = debian_package_owning);

// Debian's public debuginfod service.
inline constexpr const char* kDebianDebuginfodUrl = "https://debuginfod.debian.net";

}  // namespace lockscope
