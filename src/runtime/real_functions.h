// The real implementations behind every interposed symbol, found with dlsym(RTLD_NEXT) so that
// other preloaded tools still chain.
//
// Bootstrap: dlsym itself may take locks or allocate, and a program may lock a mutex before our
// constructor runs. The five mutex functions therefore start out pointing at glibc's exported
// __pthread_mutex_* aliases (the same code, no lookup needed) and are replaced by the dlsym result
// once resolution finishes; the rest are resolved on first use.
#pragma once

#include <pthread.h>
#include <semaphore.h>
#include <time.h>

namespace lockscope::runtime {

struct RealFunctions {
  int (*mutex_lock)(pthread_mutex_t*);
  int (*mutex_trylock)(pthread_mutex_t*);
  int (*mutex_unlock)(pthread_mutex_t*);
  int (*mutex_init)(pthread_mutex_t*, const pthread_mutexattr_t*);
  int (*mutex_destroy)(pthread_mutex_t*);
  int (*mutex_timedlock)(pthread_mutex_t*, const timespec*);
  int (*mutex_clocklock)(pthread_mutex_t*, clockid_t, const timespec*);
  int (*setname)(pthread_t, const char*);
  int (*cond_wait)(pthread_cond_t*, pthread_mutex_t*);
  int (*cond_timedwait)(pthread_cond_t*, pthread_mutex_t*, const timespec*);
  int (*cond_clockwait)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const timespec*);
  int (*cond_signal)(pthread_cond_t*);
  int (*cond_broadcast)(pthread_cond_t*);
  int (*cond_init)(pthread_cond_t*, const pthread_condattr_t*);
  int (*cond_destroy)(pthread_cond_t*);
  int (*rwlock_rdlock)(pthread_rwlock_t*);
  int (*rwlock_tryrdlock)(pthread_rwlock_t*);
  int (*rwlock_timedrdlock)(pthread_rwlock_t*, const timespec*);
  int (*rwlock_clockrdlock)(pthread_rwlock_t*, clockid_t, const timespec*);
  int (*rwlock_wrlock)(pthread_rwlock_t*);
  int (*rwlock_trywrlock)(pthread_rwlock_t*);
  int (*rwlock_timedwrlock)(pthread_rwlock_t*, const timespec*);
  int (*rwlock_clockwrlock)(pthread_rwlock_t*, clockid_t, const timespec*);
  int (*rwlock_unlock)(pthread_rwlock_t*);
  int (*rwlock_init)(pthread_rwlock_t*, const pthread_rwlockattr_t*);
  int (*rwlock_destroy)(pthread_rwlock_t*);
  int (*spin_lock)(pthread_spinlock_t*);
  int (*spin_trylock)(pthread_spinlock_t*);
  int (*spin_unlock)(pthread_spinlock_t*);
  int (*spin_init)(pthread_spinlock_t*, int);
  int (*spin_destroy)(pthread_spinlock_t*);
  int (*sem_wait)(sem_t*);
  int (*sem_trywait)(sem_t*);
  int (*sem_timedwait)(sem_t*, const timespec*);
  int (*sem_clockwait)(sem_t*, clockid_t, const timespec*);
  int (*sem_post)(sem_t*);
  int (*sem_init)(sem_t*, int, unsigned);
  int (*sem_destroy)(sem_t*);
  int (*barrier_wait)(pthread_barrier_t*);
  int (*barrier_init)(pthread_barrier_t*, const pthread_barrierattr_t*, unsigned);
  int (*barrier_destroy)(pthread_barrier_t*);
  int (*execve)(const char*, char* const[], char* const[]);
  int (*execvpe)(const char*, char* const[], char* const[]);
  int (*fexecve)(int, char* const[], char* const[]);
  void (*underscore_exit)(int);
  void (*underscore_capital_exit)(int);
  bool resolved;  // resolve_real_functions() has run
};

// Resolves everything once (idempotent, thread-safe enough: concurrent callers store equal values).
void resolve_real_functions();
// A hidden global, read inline on the hot path (no call, no GOT).
extern RealFunctions g_real_functions;
inline RealFunctions& real() {
  return g_real_functions;
}
// For the functions without a bootstrap alias: resolved on first use, before our constructor if
// the program calls them that early.
inline RealFunctions& resolved_real() {
  if (__builtin_expect(!g_real_functions.resolved, 0)) resolve_real_functions();
  return g_real_functions;
}

}  // namespace lockscope::runtime
