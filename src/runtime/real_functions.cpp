#include "runtime/real_functions.h"

#include <dlfcn.h>
#include <unistd.h>

#include "runtime/raw_log.h"

// glibc exports aliases of the real mutex functions as non-default versions (GLIBC_2.2.5, still in
// 2.36): bind to them explicitly so the bootstrap needs no dlsym.
extern "C" {
int lockscope_boot_mutex_lock(pthread_mutex_t*);
int lockscope_boot_mutex_trylock(pthread_mutex_t*);
int lockscope_boot_mutex_unlock(pthread_mutex_t*);
int lockscope_boot_mutex_init(pthread_mutex_t*, const pthread_mutexattr_t*);
int lockscope_boot_mutex_destroy(pthread_mutex_t*);
}
__asm__(".symver lockscope_boot_mutex_lock,__pthread_mutex_lock@GLIBC_2.2.5");
__asm__(".symver lockscope_boot_mutex_trylock,__pthread_mutex_trylock@GLIBC_2.2.5");
__asm__(".symver lockscope_boot_mutex_unlock,__pthread_mutex_unlock@GLIBC_2.2.5");
__asm__(".symver lockscope_boot_mutex_init,__pthread_mutex_init@GLIBC_2.2.5");
__asm__(".symver lockscope_boot_mutex_destroy,__pthread_mutex_destroy@GLIBC_2.2.5");

namespace lockscope::runtime {

namespace {
// The five mutex calls work before anything is resolved; everything else is resolved on first use
// (zero until then). Constant-initialised (constinit): in place before any constructor runs.
constexpr RealFunctions boot_functions() {
  RealFunctions functions{};
  functions.mutex_lock = lockscope_boot_mutex_lock;
  functions.mutex_trylock = lockscope_boot_mutex_trylock;
  functions.mutex_unlock = lockscope_boot_mutex_unlock;
  functions.mutex_init = lockscope_boot_mutex_init;
  functions.mutex_destroy = lockscope_boot_mutex_destroy;
  return functions;
}
}  // namespace

constinit RealFunctions g_real_functions = boot_functions();

namespace {

template <typename Function>
void resolve(Function& slot, const char* name, const char* version = nullptr) {
  void* found = version ? dlvsym(RTLD_NEXT, name, version) : nullptr;
  if (!found) found = dlsym(RTLD_NEXT, name);
  if (found) {
    slot = reinterpret_cast<Function>(found);
  } else if (!slot) {
    RawLine().append("cannot resolve ").append(name).append("; calls to it will fail").emit();
  }
}

}  // namespace

void resolve_real_functions() {
  RealFunctions r = g_real_functions;
  resolve(r.mutex_lock, "pthread_mutex_lock");
  resolve(r.mutex_trylock, "pthread_mutex_trylock");
  resolve(r.mutex_unlock, "pthread_mutex_unlock");
  resolve(r.mutex_init, "pthread_mutex_init");
  resolve(r.mutex_destroy, "pthread_mutex_destroy");
  resolve(r.mutex_timedlock, "pthread_mutex_timedlock");
  resolve(r.mutex_clocklock, "pthread_mutex_clocklock");
  resolve(r.setname, "pthread_setname_np");
  // The condvar ABI changed in glibc 2.3.2; an unversioned dlsym returns the old one.
  resolve(r.cond_wait, "pthread_cond_wait", "GLIBC_2.3.2");
  resolve(r.cond_timedwait, "pthread_cond_timedwait", "GLIBC_2.3.2");
  resolve(r.cond_clockwait, "pthread_cond_clockwait");
  resolve(r.cond_signal, "pthread_cond_signal", "GLIBC_2.3.2");
  resolve(r.cond_broadcast, "pthread_cond_broadcast", "GLIBC_2.3.2");
  resolve(r.cond_init, "pthread_cond_init", "GLIBC_2.3.2");
  resolve(r.cond_destroy, "pthread_cond_destroy", "GLIBC_2.3.2");
  resolve(r.rwlock_rdlock, "pthread_rwlock_rdlock");
  resolve(r.rwlock_tryrdlock, "pthread_rwlock_tryrdlock");
  resolve(r.rwlock_timedrdlock, "pthread_rwlock_timedrdlock");
  resolve(r.rwlock_clockrdlock, "pthread_rwlock_clockrdlock");
  resolve(r.rwlock_wrlock, "pthread_rwlock_wrlock");
  resolve(r.rwlock_trywrlock, "pthread_rwlock_trywrlock");
  resolve(r.rwlock_timedwrlock, "pthread_rwlock_timedwrlock");
  resolve(r.rwlock_clockwrlock, "pthread_rwlock_clockwrlock");
  resolve(r.rwlock_unlock, "pthread_rwlock_unlock");
  resolve(r.rwlock_init, "pthread_rwlock_init");
  resolve(r.rwlock_destroy, "pthread_rwlock_destroy");
  resolve(r.spin_lock, "pthread_spin_lock");
  resolve(r.spin_trylock, "pthread_spin_trylock");
  resolve(r.spin_unlock, "pthread_spin_unlock");
  resolve(r.spin_init, "pthread_spin_init");
  resolve(r.spin_destroy, "pthread_spin_destroy");
  resolve(r.sem_wait, "sem_wait");
  resolve(r.sem_trywait, "sem_trywait");
  resolve(r.sem_timedwait, "sem_timedwait");
  resolve(r.sem_clockwait, "sem_clockwait");
  resolve(r.sem_post, "sem_post");
  resolve(r.sem_init, "sem_init");
  resolve(r.sem_destroy, "sem_destroy");
  resolve(r.barrier_wait, "pthread_barrier_wait");
  resolve(r.barrier_init, "pthread_barrier_init");
  resolve(r.barrier_destroy, "pthread_barrier_destroy");
  resolve(r.execve, "execve");
  resolve(r.execvpe, "execvpe");
  resolve(r.fexecve, "fexecve");
  resolve(r.underscore_exit, "_exit");
  resolve(r.underscore_capital_exit, "_Exit");
  r.resolved = true;
  g_real_functions = r;
}

}  // namespace lockscope::runtime
