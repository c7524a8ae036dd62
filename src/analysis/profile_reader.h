// Reads and validates profile files (format: src/common/profile_format.h, docs/profile-format.md).
// A damaged file never stops the others from being read: its problem is kept, named by file, and
// every report shows it.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "analysis/profile_model.h"

namespace lockscope {

// The largest file read as a profile. A report reads its files whole; nothing the runtime writes
// comes near this: a profile at the scale the runtime is built for (a million lock generations,
// four call sites each, a few histogram buckets a site) is under 1 GiB, and the strings section
// is addressed by 32-bit offsets. A bigger file (an 8 GB sparse file named *.lsprof) is refused
// before it is read, not read until memory runs out.
inline constexpr uint64_t kMaxProfileFileBytes = uint64_t{4} << 30;

// Either the process, or a one-line description of what is wrong with the file
// ("truncated: 812 of 7561 bytes", "section 'sites' is corrupt (checksum mismatch)",
// "written by a newer lockscope (format version 3; this one reads up to 1)",
// "not a regular file (a FIFO)"). Only a regular file (or a symlink to one) is opened, never
// waiting: a FIFO, a device or a directory named *.lsprof is one of these problems.
std::variant<ProcessProfile, std::string> read_profile_file(const std::string& path);

// Reads every *.lsprof file of a directory, processes ordered by start time. Throws
// std::runtime_error when the directory cannot be listed; damaged files end up in
// Profile::problems; a directory without any profile file yields an empty Profile.
Profile read_profile_directory(const std::string& directory);

}  // namespace lockscope
