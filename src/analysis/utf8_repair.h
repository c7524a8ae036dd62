// Strings from a profile are bytes: argv, thread names, file paths and symbol names may be in
// Latin-1 or cut in the middle of a character (a 15-byte thread name). Reports are UTF-8 (JSON
// requires it: nlohmann-json threw on `lockscope record -- /bin/echo $'caf\xe9'`), so every
// string of the model is repaired once, after symbolization, before any writer sees it.
//
// A byte that is not part of a valid UTF-8 sequence becomes the four characters `\xHH` (upper-case
// hex): visible, ASCII, and the original byte can still be read off — `caf\xE9` — where U+FFFD
// would have lost it. Valid text (any language) is left exactly as it is. A backslash already in
// a string is not escaped, so `\xE9` in a report may also be those four characters themselves.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "analysis/profile_model.h"

namespace lockscope {

bool is_valid_utf8(std::string_view text);
// `text` with each byte outside a valid sequence written as \xHH.
std::string repair_utf8(std::string_view text);
// Repairs every string of the profile in place (and counts them in Profile::repaired_strings).
void repair_profile_strings(Profile& profile);

}  // namespace lockscope
