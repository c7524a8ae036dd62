// Modules unloaded by dlclose() keep their place in the profile: a plugin's lock sites were
// recorded as return addresses into it, and the module map is otherwise collected only when the
// profile is written, when the plugin is long gone. dlclose is interposed: the module's entry
// (path, range, bias, build-id) is read while it is still loaded, and kept once the real dlclose
// has really unmapped it (it may only have dropped a reference). The writer lists these after the
// modules still loaded, so an address that a later library reuses goes to the one loaded now.
#include "runtime/unloaded_modules.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

#include "runtime/errno_guard.h"
#include "runtime/interpose.h"
#include "runtime/module_map.h"
#include "runtime/runtime_state.h"
#include "runtime/signals_blocked.h"
#include "runtime/thread_pause.h"

namespace lockscope::runtime {
namespace {

ChunkedArray<LoadedModule, 4> g_unloaded;

// The loaded module with this bias and name, described like ModuleList does.
bool find_loaded(uintptr_t bias, const char* name, LoadedModule* into) {
  ModuleList list;
  if (!list.collect()) return false;
  for (uint32_t i = 0; i < list.count; ++i)
    if (list.modules[i].load_bias == bias && std::strcmp(list.modules[i].path, name) == 0) {
      if (into) *into = list.modules[i];
      return true;
    }
  return false;
}

}  // namespace

void append_unloaded_modules(ModuleList& list) {
  for (size_t i = 0; i < g_unloaded.size() && list.count < ModuleList::kMaxModules; ++i)
    list.modules[list.count++] = g_unloaded[i];
}

}  // namespace lockscope::runtime

LOCKSCOPE_EXPORT int dlclose(void* handle) {
  using lockscope::runtime::LoadedModule;
  using DlClose = int (*)(void*);
  static DlClose real_dlclose = reinterpret_cast<DlClose>(dlsym(RTLD_NEXT, "dlclose"));
  auto& rt = lockscope::runtime::g_runtime;
  const bool recording = rt.status.load(std::memory_order_acquire) ==
                         static_cast<int>(lockscope::runtime::RuntimeStatus::kReady);
  link_map* map = nullptr;
  LoadedModule module{};
  bool known = false;
  // <dlfcn.h> declares the handle nonnull, but a program may still pass NULL (the real dlclose
  // fails cleanly; dlinfo would not): hide the value from that assumption before testing it.
  void* checked = handle;
  asm("" : "+r"(checked));
  if (recording && checked) {
    lockscope::runtime::InsideLockscope inside;
    known = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name &&
            lockscope::runtime::find_loaded(map->l_addr, map->l_name, &module);
  }
  const int result = real_dlclose(handle);
  if (known && result == 0) {
    const lockscope::runtime::ErrnoGuard keep_errno;
    lockscope::runtime::InsideLockscope inside;
    // Never against itself, and not for ever: no handler runs inside the lock's holds (their
    // signals are blocked), but a writer may hold it long (its open() of the profile may be the
    // program's own, or slow); then the module goes unnoted: its sites are not symbolized.
    if (!lockscope::runtime::find_loaded(module.load_bias, module.path, nullptr)) {
      const lockscope::runtime::SignalsBlocked held;  // no handler inside the hold
      if (!rt.merge_lock.held_by_this_thread() &&
          rt.merge_lock.lock_within(lockscope::runtime::kMaxPauseNs)) {
        lockscope::runtime::g_unloaded.append([&](LoadedModule& into) { into = module; });
        rt.merge_lock.unlock();
      }
    }
  }
  return result;
}
