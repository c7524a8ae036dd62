// The text report's lock-order section: each inversion (a potential deadlock) with, for each of its
// edges, which lock was held where and which was taken where, by which thread.
#pragma once

#include <ostream>

#include "analysis/profile_model.h"

namespace lockscope {

// Writes nothing when no process recorded lock order (a version 2 profile) and a one-line
// all-clear when none of the edges forms a cycle.
void write_lock_order_inversions(const Profile& profile, std::ostream& out);

}  // namespace lockscope
