// Strings from a profile are bytes: argv, thread names, file paths and symbol names may be in
// Latin-1 or cut in the middle of a character (a 15-byte thread name). Reports are UTF-8 (JSON
// requires it: nlohmann-json threw on `lockscope record -- /bin/echo $'caf\xe9'`), so every
// string of the model is repaired once, after symbolization, before any writer sees it.
//
// A byte that is not part of a valid UTF-8 sequence becomes the four characters `\xHH` (upper-case
// hex): visible, ASCII, and the original byte can still be read off — `caf\xE9` — where U+FFFD
// would have lost it. Control characters are escaped the same way, so that no string of a profile
// can move the cursor, recolour or retitle the terminal that shows the report, or break a row of
// its tables: C0 (tab and newline too) and DEL as `\x1B`, C1 (U+0080 to U+009F, which some
// terminals obey as escape sequences) as `\u009B`. Valid printable text (any language) is left
// exactly as it is. A backslash already in a string is not escaped, so `\xE9` in a report may also
// be those four characters themselves.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "analysis/profile_model.h"

namespace lockscope {

// Length of the valid UTF-8 sequence at text[at] (at < text.size()), 0 when the byte there does
// not start one (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
size_t valid_sequence_at(std::string_view text, size_t at);
bool is_valid_utf8(std::string_view text);
// Valid UTF-8 without control characters: what repair_text leaves as it is.
bool is_clean_text(std::string_view text);
// `text` with each byte outside a valid sequence, and each C0 control and DEL, written as \xHH,
// and each C1 control as \u00HH.
std::string repair_text(std::string_view text);
// Repairs every string of the profile in place (and counts them in Profile::repaired_strings).
void repair_profile_strings(Profile& profile);

}  // namespace lockscope
