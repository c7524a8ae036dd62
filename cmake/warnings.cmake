# Per-target settings: warnings everywhere; sanitizers (LOCKSCOPE_SANITIZE, e.g. "address,undefined"
# or "thread") on everything built with lockscope_target() — never on the preload runtime, which
# must run inside uninstrumented programs.
set(LOCKSCOPE_SANITIZE "" CACHE STRING "Sanitizers for CLI, analysis, bench and tests")
option(LOCKSCOPE_WERROR "Treat compiler warnings as errors (CI: .ci/run sets it)" OFF)

function(lockscope_warnings target)
  # -Werror=switch always: a switch over a format enum names every value (no default), so a value
  # added without its name or classification fails to compile (common/operations.h).
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wno-unused-parameter
                                           -Wformat=2 -Werror=switch)
  if(LOCKSCOPE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

function(lockscope_target target)
  lockscope_warnings(${target})
  if(LOCKSCOPE_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${LOCKSCOPE_SANITIZE} -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${LOCKSCOPE_SANITIZE})
  endif()
endfunction()
