// Reads and validates profile files (format: src/common/profile_format.h, docs/profile-format.md).
// A damaged file never stops the others from being read: its problem is kept, named by file, and
// every report shows it.
#pragma once

#include <string>
#include <variant>

#include "analysis/profile_model.h"

namespace lockscope {

// Either the process, or a one-line description of what is wrong with the file
// ("truncated: 812 of 7561 bytes", "section 'sites' is corrupt (checksum mismatch)",
// "written by a newer lockscope (format version 3; this one reads up to 1)").
std::variant<ProcessProfile, std::string> read_profile_file(const std::string& path);

// Reads every *.lsprof file of a directory, processes ordered by start time. Throws
// std::runtime_error when the directory cannot be listed; damaged files end up in
// Profile::problems; a directory without any profile file yields an empty Profile.
Profile read_profile_directory(const std::string& directory);

}  // namespace lockscope
