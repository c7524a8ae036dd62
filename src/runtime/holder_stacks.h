// The call stacks of holds that made a thread wait, process-wide, so that the thread that waited
// can name the stack of the hold it waited behind (blame: waiter stack x holder stack).
//
// How a stack gets from the holder to the waiter. A release that finds a thread blocked acquiring
// the lock (note_release_with_waiters, before the real unlock) captures its own call stack, interns
// it here and writes its number into the lock's slot (holder_stack); the next contended acquirer,
// inside its own critical section, takes the number (0 again). The lock orders the two, as it
// orders holder_site. The capture is inside the holder's critical section: the one place where
// lockscope lengthens a hold, and only a hold that already made a thread wait, within the
// thread's stack-capture budget (1 % of its time). A hold that was itself a contended acquisition
// with a captured stack publishes that stack instead (HeldStack: exact, and no capture): the
// stack of its acquisition. Otherwise the stack is the holder's at its release: its innermost
// frame is the release's call site, its outer frames are the holder's callers (those of its
// acquisition too, when it took and released the lock in one function).
//
// Numbers are process-wide, so they need no remapping when a thread's table is merged. Interning
// happens inside the program's critical section, so it never waits: a small per-thread hint of
// stack hash -> number (checked against the stored frames) serves a stack the thread published
// before, and a new one takes the internal lock only if it is free (else the hold publishes no
// stack this time). The table is never unmapped, not even by the runtime's destructor at exit,
// while other threads may still be interning and reading.
#pragma once

#include <cstdint>

#include "runtime/internal_lock.h"
#include "runtime/stack_store.h"

namespace lockscope::runtime {

// A thread's recently published holder stacks: hash -> number in the HolderStackTable.
struct HolderStackHint {
  uint64_t hash;
  uint32_t number;
  uint32_t reserved;
};
inline constexpr uint32_t kHolderStackHints = 8;

// A hold's own acquisition stack, when its acquisition captured one: its number in the thread's own
// StackStore (table epoch `epoch`), valid for the held lock whose start_ticks it repeats (a held
// lock that moved or another hold in the same place does not). Kept beside the held-lock stack,
// index for index, so the release publishes it without a capture; the acquisition itself takes
// no process-wide lock.
struct HeldStack {
  uint64_t start_ticks;
  uint32_t number;
  uint32_t epoch;
};
// A published holder stack (holder_stack(slot), BlameKey::holder_stack), one 32-bit word:
//   bit  31      kHolderStackAtAcquire  the stack is the hold's acquisition stack (innermost
//                                       frame: its acquire site), not its stack at release
//   bits 0..30   kHolderStackNumber     its number in the HolderStackTable (0: none captured)
// A number never reaches bit 31 in practice (2^31 distinct stacks would take over 48 GiB of the
// table's memory first), but nothing refuses one that would: intern() returns what StackStore
// gives.
inline constexpr uint32_t kHolderStackAtAcquire = 0x80000000u;
inline constexpr uint32_t kHolderStackNumber = 0x7FFFFFFFu;
static_assert((kHolderStackAtAcquire & kHolderStackNumber) == 0 &&
                  (kHolderStackAtAcquire | kHolderStackNumber) == UINT32_MAX,
              "the flag and the number are disjoint and fill the word");

class HolderStackTable {
 public:
  constexpr HolderStackTable() : stacks_() {}
  ~HolderStackTable() {}  // stacks_ is never destroyed (see above)
  // The number of stack frames[0..depth) (1 ...), interned if new; 0 when memory was refused or
  // the lock was busy. Must be called marked inside lockscope (the lock is internal).
  uint32_t intern(const uintptr_t* frames, uint32_t depth, HolderStackHint* hints);
  // Stacks [1, stacks().size()] may be read while others are interned.
  const StackStore& stacks() const { return stacks_; }
  // After fork(), in the child: the stacks stay (the child's blame may name them).
  void reset_after_fork() { lock_.reset(); }

 private:
  union {
    StackStore stacks_;
  };
  InternalLock lock_;
};

}  // namespace lockscope::runtime
