// Writing the profile when a signal's default action ends the process (fatal_signals.cpp).
#pragma once

namespace lockscope::runtime {

// Stands in for SIG_DFL on every fatal signal the program left at its default. Called once, when
// the runtime initialises.
void install_fatal_signal_handlers();

}  // namespace lockscope::runtime
