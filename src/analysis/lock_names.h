// Lock names: what a person calls a synchronization object, in place of its address. A lock is
// named, best first, after
//   1. the data object whose bytes hold it, from the module's symbol table: a global or static
//      lock, or a member of one, named by DWARF where the module has its types
//      ("account_a", "_PyRuntime.ceval.gil.mutex", "stripes[2].lock"), else by its offset
//      ("cache+0x40");
//   2. its *_init call, function and file:line ("Statistics kvcache_demo.cpp:32");
//   3. the call site of its first acquire or wait, for heap and stack locks that no init named
//      (every std::mutex): "serve_requests kvcache_demo.cpp:83"; where that site lies in library
//      code (std::mutex::lock not inlined: every std::mutex would share it), the program's own
//      frame on the stacks through the lock's sites, most waited-from first;
//   4. in profiles that lack the first use (older files, trace rebuilds): its busiest acquire
//      site;
//   5. else its address.
// A name is the same in every run of one build of the program (unlike the address: ASLR, the
// heap), so that two runs can be matched lock by lock; several locks may share one (4,096 mutexes
// made by one loop), and same_name_locks says how many of the process's do.
#pragma once

#include <string>

#include "analysis/profile_model.h"

namespace lockscope {

class Symbolizer;

// Names every lock of every process (LockSummary::name, name_source, same_name_locks). Its code
// locations must be symbolized already; `symbolizer` looks up the data symbols.
void name_locks(Profile& profile, Symbolizer& symbolizer);

// Its name; a profile that was not symbolized (a test's hand-made one) has none: its address.
std::string lock_name(const LockSummary& lock);

// The set of locks a lock belongs to: its name, but for the elements of one global array, which
// share "stripes[].lock" ("stripes[2].lock" is one of them): the striped or hashed sets that
// asymmetric contention looks at are made by one init site or one array.
std::string lock_family_name(const LockSummary& lock);

// The name as prose says it, with what it is and how it was named: "mutex account_a", "mutex
// initialised at Statistics kvcache_demo.cpp:32", "mutex first taken at serve_requests
// kvcache_demo.cpp:83", "condvar first waited on at pop q.c:40".
std::string lock_name_phrase(const LockSummary& lock);

// How the name was found, as the machine formats spell it (the JSON contract): "symbol", "init",
// "first-use", "caller", "busiest-site", "address".
const char* lock_name_source_name(LockNameSource source);

}  // namespace lockscope
