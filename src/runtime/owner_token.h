// The owner token: how an owner word (a glibc mutex's __count, lock_owner.h) and a thread
// (ThreadState::owner_token) name a thread of this process. One 32-bit word, two fields:
//
//   bits 22..31  fork generation   1 .. kForkGenerations - 1 (Runtime::fork_generation: 1 in the
//                                  first process, the next one in each fork child, wrapping
//                                  past 0), so a token is never 0, which says "no owner"
//   bits  0..21  tid               a Linux thread id: below PID_MAX_LIMIT, 2^22 on 64-bit
//                                  (the kernel's include/linux/threads.h)
//
// A mutex a parent left locked (or merely owned last) is copied into a forked child with the
// parent's token in it: its generation differs from every token of the child's threads, so
// word_owner() names no owner there, and the child's first acquisition is not counted as a change
// of owner from a thread the child never had (a tid the child may reuse).
#pragma once

#include <cstdint>

namespace lockscope::runtime {

inline constexpr uint32_t kOwnerTidBits = 22;
inline constexpr uint32_t kOwnerTidMask = (1u << kOwnerTidBits) - 1;
inline constexpr uint32_t kForkGenerations = 1u << (32 - kOwnerTidBits);
constexpr uint32_t owner_token(uint32_t tid, uint32_t fork_generation) {
  return fork_generation << kOwnerTidBits | (tid & kOwnerTidMask);
}
// The owner an owner word names, as a tid: 0 when none of this process (fork generation).
constexpr uint32_t word_owner(uint32_t word, uint32_t own_token) {
  return word != 0 && ((word ^ own_token) >> kOwnerTidBits) == 0 ? word & kOwnerTidMask : 0;
}

inline constexpr uint32_t kLinuxPidMaxLimit = 4u * 1024 * 1024;  // PID_MAX_LIMIT on 64-bit
static_assert(kLinuxPidMaxLimit - 1 <= kOwnerTidMask, "every Linux tid fits the tid field");
inline constexpr uint32_t kOwnerGenerationMask = (kForkGenerations - 1) << kOwnerTidBits;
static_assert((kOwnerTidMask & kOwnerGenerationMask) == 0,
              "the tid and the generation are disjoint");
static_assert((kOwnerTidMask | kOwnerGenerationMask) == UINT32_MAX,
              "the tid and the generation fill the word");
static_assert(owner_token(0, 1) != 0 && owner_token(0, kForkGenerations - 1) != 0,
              "no generation the runtime uses (1 .. kForkGenerations - 1) makes a token 0");
static_assert(word_owner(owner_token(kLinuxPidMaxLimit - 1, 7), owner_token(1, 7)) ==
                  kLinuxPidMaxLimit - 1,
              "a token of this generation names its tid whole");
static_assert(word_owner(owner_token(42, 7), owner_token(42, 8)) == 0,
              "a token of another generation names no owner, even with the same tid");

}  // namespace lockscope::runtime
