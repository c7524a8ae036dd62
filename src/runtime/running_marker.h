// This process's running marker (common/running_marker.h): it tells `lockscope record` that a
// profile is still to come from this process, so the CLI can wait for descendants it is not the
// parent of. Async-signal-safe (open, read, getdents64, unlink): used from the atfork child handler
// and from fatal-signal handlers.
#pragma once

namespace lockscope::runtime {

// When the runtime starts in this image, and in a fork()ed child: creates this process's marker
// (an exec'd image finds it already there: same pid, same start time).
void create_running_marker();
// With the final profile written: creates the markers of the children this process still has
// (one forked a moment ago may not have made its own yet), then removes this process's own. Not
// at exec (the process goes on) nor at a snapshot.
void finish_running_marker();

}  // namespace lockscope::runtime
