// Stack capture: the return addresses of the calling thread's stack, for the recorder to store
// with a contended acquisition (DESIGN.md: "walked by frame pointer (cheap) with a depth limit").
//
// What is captured. frames[0] is the return address in the function that called capture_stack()
// (the address after its call instruction), frames[1] the one in that function's caller, and so
// on outwards. A caller that wants to hide its own frames skips them by count; one that tail-calls
// capture_stack() is not on the stack and so not in frames. Addresses are return addresses
// throughout: a consumer subtracts 1 to find the call's line. A frame that a signal interrupted
// is only seen by the DWARF walk, which stores its PC + 1 so that the same rule holds.
//
// Three ways to walk:
//  - kFramePointer follows the saved-frame-pointer chain and checks every step: the frame record
//    16-byte aligned (the x86-64 and AArch64 ABIs keep it so), the next one strictly above the
//    current one by less than 1 MB and below the top of this thread's stack (a frame is on it
//    when it lies less than the default thread stack size below the thread's descriptor, or for
//    the main thread less than 128 MiB below its stack top: a coroutine's or a sigaltstack's frame
//    ends the walk, which --unwind auto then redoes with the unwind tables), and the return
//    address inside an executable segment of a loaded module (ExecutableRanges). A null frame
//    pointer ends it. It reads only this thread's stack, calls nothing but pthread_self(), and
//    costs about 8 ns a frame (78 ns for 10 frames, bench/overhead/stack_capture_bench.cpp, 2-CPU
//    KVM guest). Through code built without frame pointers it stops early, or — when such code
//    leaves the register untouched — silently skips the frames of that code: no check can see that.
//  - kDwarf uses libgcc's _Unwind_Backtrace (CFI from .eh_frame), resolved once by
//    init_stack_capture(); right through -fomit-frame-pointer code and signal frames, at about
//    300 ns a frame (2.9 us for 10). Without libgcc_s it degrades to the frame-pointer walk
//    (unwinder_for() says which one runs).
//  - kAuto walks frame pointers and redoes the capture with DWARF when the chain broke early: fewer
//    than 2 frames, or a frame failed a check before the chain ended. The chain "ended" at a null
//    frame pointer, at max_frames, or at a return address into libc after which the next frame
//    fails a check: Debian's libc keeps no frame pointer, so main()'s and every thread function's
//    chain ends that way (main's saved frame pointer is 1 on glibc 2.36), and treating that as
//    broken would send every capture to DWARF. The price: frames above a libc callback (qsort,
//    pthread_once) are only seen by kDwarf.
//
// Safety. No malloc, no lock, no system call on the frame-pointer path: callable from a signal
// handler that interrupted the same thread (even inside the runtime) and from thread-exit
// destructors. The DWARF path runs libgcc's code: with Debian 12's libgcc_s (GCC 12) and glibc
// 2.36 it finds unwind tables through _dl_find_object, which is lock-free and async-signal-safe,
// and never calls dl_iterate_phdr. It does lock a pthread mutex (object_mutex — one of the
// program's mutexes as far as interposition goes, so the recorder must be marked inside lockscope
// around it) and may malloc (sorting the FDEs of an object on first use) when some code registered
// unwind tables with __register_frame_info: JIT compilers, and static binaries without
// .eh_frame_hdr. init_stack_capture()'s warm-up capture runs the one-time setup (pthread_once of
// the register-size table, lazy PLT binding of libgcc's calls) so that later captures do not.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/runtime_config.h"

namespace lockscope::runtime {

enum class UnwindMode : uint8_t { kFramePointer, kDwarf, kAuto };
// The config's unwind= names are indexed by it.
static_assert(config::kUnwindModes == static_cast<size_t>(UnwindMode::kAuto) + 1);
static_assert(
    std::string_view(config::kUnwindNames[static_cast<int>(UnwindMode::kFramePointer)]) == "fp" &&
    std::string_view(config::kUnwindNames[static_cast<int>(UnwindMode::kDwarf)]) == "dwarf" &&
    std::string_view(config::kUnwindNames[static_cast<int>(UnwindMode::kAuto)]) == "auto");
enum class Unwinder : uint8_t { kFramePointer, kDwarf, kFramePointerThenDwarf };

// How a frame-pointer walk stopped.
enum class FrameChainEnd : uint8_t {
  kNullFramePointer,  // the outermost frame said so: a complete chain
  kEnteredLibc,       // a libc return address, then a frame that fails a check: complete (above)
  kFramesFull,        // max_frames written
  kBroken,            // a frame failed a check: code without frame pointers, or a corrupt stack
  kNoStackBounds,     // not on this thread's stack (an alternate signal stack, a switched stack):
                      // only frames[0], from capture_stack()'s own frame, is trusted
};

struct StackCaptureOutcome {
  uint32_t depth = 0;                           // frames written
  Unwinder unwinder = Unwinder::kFramePointer;  // the walk whose frames were returned
  FrameChainEnd frame_chain_end = FrameChainEnd::kNullFramePointer;  // of the fp walk, if one ran
};

// Resolves _Unwind_Backtrace (already loaded, else from dlopen("libgcc_s.so.1")), reads the
// executable ranges and warms the DWARF unwinder up with one capture. Call from the runtime's
// constructor, before the first capture: until then captures return 0 frames. Idempotent.
void init_stack_capture();
// After the program loaded or unloaded code (dlopen/dlclose), off the capture path.
void refresh_stack_capture_modules();

// Returns the number of return addresses written to `frames` (at most max_frames).
__attribute__((noinline)) uint32_t capture_stack(uintptr_t* frames, uint32_t max_frames,
                                                 UnwindMode mode);
// The same capture, saying how it went (for counting broken chains and DWARF fallbacks).
__attribute__((noinline)) StackCaptureOutcome capture_stack_with_outcome(uintptr_t* frames,
                                                                         uint32_t max_frames,
                                                                         UnwindMode mode);

// Which walk capture_stack(mode) runs now: kDwarf and kAuto are frame pointers only when libgcc's
// unwinder is not available.
Unwinder unwinder_for(UnwindMode mode);
const char* unwinder_name(Unwinder unwinder);

// The frame-pointer walk itself, from a frame record at `frame_address` (saved frame pointer, then
// return address) up to `stack_top`: exposed for tests that build chains by hand.
struct FrameChainWalk {
  uint32_t depth;
  FrameChainEnd end;
};
FrameChainWalk walk_frame_chain(uintptr_t frame_address, uintptr_t stack_top, uintptr_t* frames,
                                uint32_t max_frames);

}  // namespace lockscope::runtime
