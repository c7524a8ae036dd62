// The profile directory of `record`/`run`: created if needed and checked writable before the
// program starts (so a long run never ends in "cannot write"); an existing profile there is moved
// to DIR.old, like perf.data -> perf.data.old, so two runs never mix and nothing is silently lost.
#pragma once

#include <string>

namespace lockscope {
void prepare_profile_directory(const std::string& directory);
}
