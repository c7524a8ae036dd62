// The text report's lock-order section: each inversion (a potential deadlock) with, for each of its
// edges, which lock was held where and which was taken where, by which thread.
#pragma once

#include <ostream>

#include "analysis/profile_views.h"

namespace lockscope {

// Writes nothing when no process recorded lock order (a version 2 profile) and a one-line
// all-clear when none of the edges forms a cycle. The inversions are the views' (searched once);
// the locks are named as the tables name them (by name, or with `addresses` by pid/address).
void write_lock_order_inversions(const ProfileViews& views, bool addresses, std::ostream& out);

}  // namespace lockscope
