#include "runtime/stack_capture.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <unwind.h>  // types only: the functions are resolved at run time, never linked

#include <atomic>

#include "runtime/executable_ranges.h"
#include "runtime/raw_log.h"

namespace lockscope::runtime {
namespace {

constexpr uintptr_t kFrameRecordAlignment = 16;
// A frame that needs more than this is not worth walking past (and is much more likely garbage).
constexpr uintptr_t kMaxFrameBytes = 1 << 20;
// The most a stack may hold, whatever the limits say.
constexpr uintptr_t kMaxStackBytes = uintptr_t{1} << 30;
// The main thread's frames lie this close below its stack top: the kernel keeps the mmap area at
// least 128 MiB below the stack (mmap_base's gap), or far away (the legacy layout of an unlimited
// RLIMIT_STACK). Its thread descriptor is not above its stack but in the mmap area, where the
// stacks a coroutine library maps for it land too.
constexpr uintptr_t kMainStackBytes = uintptr_t{128} << 20;
// A thread's frames lie within its stack's size below its descriptor, which glibc puts at the
// stack's top: the default thread stack size (init_stack_capture; RLIMIT_STACK's at start-up, or
// pthread_setattr_default_np's). A frame further below (a thread given a larger stack, walked as
// deep as this; a coroutine's stack mapped below the thread's) is on no stack the walk knows. The
// bound was 1 GiB, which took a coroutine's stack for the thread's own: garbage left in the frame
// pointer register then sent the walk into the guard page above the coroutine's stack (SIGSEGV).
std::atomic<uintptr_t> g_thread_stack_bytes{uintptr_t{8} << 20};
std::atomic<uintptr_t> g_main_thread{0};  // the main thread's descriptor (pthread_self())
// Frames of the DWARF walk's own (capture_stack, the walk, _Unwind_Backtrace's caller) that may be
// skipped before the caller's return address must have turned up.
constexpr uint32_t kMaxDwarfFramesSkipped = 8;

using BacktraceFunction = _Unwind_Reason_Code (*)(_Unwind_Trace_Fn, void*);
using GetIpInfoFunction = _Unwind_Ptr (*)(_Unwind_Context*, int*);
std::atomic<BacktraceFunction> g_backtrace{nullptr};
std::atomic<GetIpInfoFunction> g_get_ip_info{nullptr};
std::atomic<bool> g_initialized{false};
// ld.so's __libc_stack_end: the stack pointer at process entry, above every frame of the main
// thread. Looked up by dlsym rather than linked, which would add ld.so to the runtime's NEEDED.
std::atomic<uintptr_t> g_main_stack_top{0};

// The top of the stack that `frame` is on: the main thread's stack top (__libc_stack_end), or
// another thread's descriptor (pthread_self(): glibc puts it above a thread's stack, a stack given
// by pthread_attr_setstack included). 0 when the frame is not within that stack's bound below it:
// a sigaltstack, a coroutine's stack, a stack switched to.
uintptr_t stack_top_above(uintptr_t frame) {
  const auto thread = reinterpret_cast<uintptr_t>(pthread_self());
  if (thread == g_main_thread.load(std::memory_order_relaxed)) {
    const uintptr_t main_top = g_main_stack_top.load(std::memory_order_relaxed);
    return frame < main_top && main_top - frame < kMainStackBytes ? main_top : 0;
  }
  const uintptr_t stack_bytes = g_thread_stack_bytes.load(std::memory_order_relaxed);
  return frame < thread && thread - frame < stack_bytes ? thread : 0;
}

// The default thread stack size (pthread_attr_setstacksize's default: RLIMIT_STACK's at
// start-up, 2 MiB when that is unlimited, or what pthread_setattr_default_np set), at most
// kMaxStackBytes; 8 MiB when it cannot be read.
uintptr_t default_thread_stack() {
  uintptr_t bytes = uintptr_t{8} << 20;
  pthread_attr_t defaults;
  if (pthread_getattr_default_np(&defaults) == 0) {
    size_t size = 0;
    if (pthread_attr_getstacksize(&defaults, &size) == 0 && size != 0) bytes = size;
    pthread_attr_destroy(&defaults);
  }
  return bytes < kMaxStackBytes ? bytes : kMaxStackBytes;
}

struct DwarfWalk {
  uintptr_t* frames;
  uint32_t max_frames;
  uint32_t depth;
  uint32_t skipped;
  uintptr_t first_return_address;  // capture_stack()'s own: frames before it are ours
  GetIpInfoFunction get_ip_info;
};

_Unwind_Reason_Code record_dwarf_frame(_Unwind_Context* context, void* data) {
  auto& walk = *static_cast<DwarfWalk*>(data);
  int before_instruction = 0;
  uintptr_t address = walk.get_ip_info(context, &before_instruction);
  // A signal-interrupted frame's PC is the next instruction to run, not a return address.
  if (before_instruction) address += 1;
  if (walk.depth == 0 && address != walk.first_return_address) {
    return ++walk.skipped > kMaxDwarfFramesSkipped ? _URC_END_OF_STACK : _URC_NO_REASON;
  }
  if (address == 0) return _URC_END_OF_STACK;
  walk.frames[walk.depth++] = address;
  return walk.depth < walk.max_frames ? _URC_NO_REASON : _URC_END_OF_STACK;
}

__attribute__((noinline)) uint32_t walk_dwarf(uintptr_t* frames, uint32_t max_frames,
                                              uintptr_t first_return_address,
                                              BacktraceFunction backtrace) {
  DwarfWalk walk{frames, max_frames,           0,
                 0,      first_return_address, g_get_ip_info.load(std::memory_order_acquire)};
  backtrace(record_dwarf_frame, &walk);
  return walk.depth;
}

bool chain_broke_early(const FrameChainWalk& walk) {
  return walk.depth < 2 || walk.end == FrameChainEnd::kBroken ||
         walk.end == FrameChainEnd::kNoStackBounds;
}

// The capture, run in the frame of capture_stack() or capture_stack_with_outcome(): `own_frame` is
// that function's frame record, `own_return_address` its return address (frames[0]).
__attribute__((always_inline)) inline StackCaptureOutcome capture_from(uintptr_t own_frame,
                                                                       uintptr_t own_return_address,
                                                                       uintptr_t* frames,
                                                                       uint32_t max_frames,
                                                                       UnwindMode mode) {
  StackCaptureOutcome outcome;
  if (max_frames == 0) return outcome;
  const BacktraceFunction backtrace = g_backtrace.load(std::memory_order_acquire);
  if (mode == UnwindMode::kDwarf && backtrace) {
    outcome.unwinder = Unwinder::kDwarf;
    outcome.depth = walk_dwarf(frames, max_frames, own_return_address, backtrace);
  } else {
    const FrameChainWalk walk =
        walk_frame_chain(own_frame, stack_top_above(own_frame), frames, max_frames);
    outcome.depth = walk.depth;
    outcome.frame_chain_end = walk.end;
    if (mode == UnwindMode::kAuto && backtrace && chain_broke_early(walk)) {
      outcome.unwinder = Unwinder::kDwarf;
      outcome.depth = walk_dwarf(frames, max_frames, own_return_address, backtrace);
    }
  }
  // Keeps the walks from being tail calls: the frame record they start from must still be there.
  __asm__ volatile("" ::: "memory");
  return outcome;
}

}  // namespace

FrameChainWalk walk_frame_chain(uintptr_t frame_address, uintptr_t stack_top, uintptr_t* frames,
                                uint32_t max_frames) {
  const ExecutableRanges& code = executable_ranges();
  uint32_t depth = 0;
  uintptr_t frame = frame_address;
  for (;;) {
    if (depth == max_frames) return {depth, FrameChainEnd::kFramesFull};
    const auto* record = reinterpret_cast<const uintptr_t*>(frame);
    const uintptr_t return_address = record[1];
    if (return_address == 0) return {depth, FrameChainEnd::kNullFramePointer};
    if (!code.contains(return_address)) return {depth, FrameChainEnd::kBroken};
    frames[depth++] = return_address;
    const uintptr_t next = record[0];
    const bool in_libc = return_address >= code.libc_begin() && return_address < code.libc_end();
    // A null saved frame pointer ends a whole chain only in the outermost frame, whose return
    // address is in libc (start_thread, __libc_start_call_main). Elsewhere it is code built
    // without frame pointers that never set the register (a new thread's is 0): broken.
    if (next == 0)
      return {depth, in_libc ? FrameChainEnd::kNullFramePointer : FrameChainEnd::kBroken};
    if (stack_top == 0) return {depth, FrameChainEnd::kNoStackBounds};
    const bool plausible = next % kFrameRecordAlignment == 0 && next > frame &&
                           next - frame < kMaxFrameBytes && stack_top >= 2 * sizeof(uintptr_t) &&
                           next <= stack_top - 2 * sizeof(uintptr_t);
    if (!plausible) return {depth, in_libc ? FrameChainEnd::kEnteredLibc : FrameChainEnd::kBroken};
    frame = next;
  }
}

uint32_t capture_stack(uintptr_t* frames, uint32_t max_frames, UnwindMode mode) {
  return capture_from(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)),
                      reinterpret_cast<uintptr_t>(__builtin_return_address(0)), frames, max_frames,
                      mode)
      .depth;
}

StackCaptureOutcome capture_stack_with_outcome(uintptr_t* frames, uint32_t max_frames,
                                               UnwindMode mode) {
  return capture_from(reinterpret_cast<uintptr_t>(__builtin_frame_address(0)),
                      reinterpret_cast<uintptr_t>(__builtin_return_address(0)), frames, max_frames,
                      mode);
}

void init_stack_capture() {
  if (g_initialized.exchange(true, std::memory_order_acq_rel)) return;
  executable_ranges().refresh();
  g_thread_stack_bytes.store(default_thread_stack(), std::memory_order_relaxed);
  // Called from the runtime's constructor: on the main thread, unless a thread made before it
  // (another library's constructor) got here first.
  if (getpid() == static_cast<pid_t>(syscall(SYS_gettid)))
    g_main_thread.store(reinterpret_cast<uintptr_t>(pthread_self()), std::memory_order_relaxed);
  if (auto* stack_end = static_cast<void**>(dlsym(RTLD_DEFAULT, "__libc_stack_end")))
    g_main_stack_top.store(reinterpret_cast<uintptr_t>(*stack_end), std::memory_order_relaxed);
  // Whichever unwinder the program already has (libgcc_s for any C++ program), else libgcc_s.
  void* backtrace = dlsym(RTLD_DEFAULT, "_Unwind_Backtrace");
  void* get_ip_info = dlsym(RTLD_DEFAULT, "_Unwind_GetIPInfo");
  if (!backtrace || !get_ip_info) {
    // RTLD_NODELETE: captures may run until the very end, after any dlclose.
    void* libgcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    backtrace = libgcc ? dlsym(libgcc, "_Unwind_Backtrace") : nullptr;
    get_ip_info = libgcc ? dlsym(libgcc, "_Unwind_GetIPInfo") : nullptr;
    if (libgcc) executable_ranges().refresh();
  }
  if (!backtrace || !get_ip_info) {
    RawLine()
        .append("stack capture: no _Unwind_Backtrace (libgcc_s.so.1 not loadable); ")
        .append("DWARF stacks fall back to frame pointers")
        .emit();
    return;
  }
  g_get_ip_info.store(reinterpret_cast<GetIpInfoFunction>(get_ip_info), std::memory_order_release);
  g_backtrace.store(reinterpret_cast<BacktraceFunction>(backtrace), std::memory_order_release);
  // The first _Unwind_Backtrace runs libgcc's one-time set-up and binds its PLT entries.
  uintptr_t warm_up[16];
  capture_stack(warm_up, 16, UnwindMode::kDwarf);
}

void refresh_stack_capture_modules() {
  executable_ranges().refresh();
}

Unwinder unwinder_for(UnwindMode mode) {
  if (mode == UnwindMode::kFramePointer || !g_backtrace.load(std::memory_order_acquire))
    return Unwinder::kFramePointer;
  return mode == UnwindMode::kDwarf ? Unwinder::kDwarf : Unwinder::kFramePointerThenDwarf;
}

const char* unwinder_name(Unwinder unwinder) {
  switch (unwinder) {
    case Unwinder::kFramePointer:
      return "frame-pointer";
    case Unwinder::kDwarf:
      return "dwarf";
    case Unwinder::kFramePointerThenDwarf:
      return "frame-pointer, dwarf when broken";
  }
  return "unknown";
}

}  // namespace lockscope::runtime
