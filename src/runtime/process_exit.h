// The profile writes of the ways a process ends (process_exit.cpp), for the other entry points.
#pragma once

namespace lockscope::runtime {

// From a fatal signal's stand-in handler: writes the profile once (ExitPath::kSignal).
void write_profile_on_signal(int signal_number);
// A periodic snapshot (ExitPath::kSnapshot) of a process still running; never after its end.
void write_profile_snapshot();
// quick_exit's handler (registered at start-up: lifecycle.cpp): writes with the status quick_exit
// was given (ExitPath::kQuickExit).
void write_profile_at_quick_exit();

}  // namespace lockscope::runtime
