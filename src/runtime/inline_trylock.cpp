#include "runtime/inline_trylock.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/real_functions.h"

namespace lockscope::runtime {
namespace {

// The object a function pointer lives in is glibc's (libc.so.6; libpthread.so.0 before 2.34).
bool is_glibcs(void* function) {
  Dl_info info{};
  if (function == nullptr || dladdr(function, &info) == 0 || info.dli_fname == nullptr)
    return false;
  const char* base = strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  return strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libpthread.so", 13) == 0;
}

// glibc elides a normal mutex's lock only on a CPU with RTM, and only when a tunable asks it to.
bool elision_possible() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  constexpr unsigned kRtm = 1u << 11;
  if (!(ebx & kRtm)) return false;
  const char* tunables = getenv("GLIBC_TUNABLES");
  return tunables != nullptr && strstr(tunables, "glibc.elision.enable") != nullptr;
}

}  // namespace

int inline_trylock_tid_offset() {
  if (!is_glibcs(reinterpret_cast<void*>(real().mutex_trylock)) || elision_possible()) return -1;
  return find_glibc_tid_offset();
}

}  // namespace lockscope::runtime
