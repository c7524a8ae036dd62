// Symbolizer fixture: a two-level inline chain (innermost_step -> middle_step -> outer_entry) at
// -O2, so that one address belongs to three source frames.
#include <cstdio>

volatile int sink;

static inline __attribute__((always_inline)) void innermost_step(int x) {
  sink = x * 3;
  sink = sink + x;
}

static inline __attribute__((always_inline)) void middle_step(int x) {
  sink = x + 1;
  innermost_step(x + 2);
  sink = sink - 5;
}

__attribute__((noinline)) void outer_entry(int x) {
  sink = x;
  middle_step(x);
  sink = sink * 7;
}

int main(int argc, char**) {
  outer_entry(argc);
  std::printf("%d\n", sink);
  return 0;
}
