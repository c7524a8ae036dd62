// Symbolizer fixture: ordinary out-of-line functions of several kinds (namespace, member, static,
// extern "C", template), built at -O0 as a PIE and as a non-PIE executable.
#include <cstdio>

namespace fixture {

struct Counter {
  int value = 0;
  __attribute__((noinline)) void add(int amount) {
    value += amount;
    if (value > 100) value = 0;
  }
};

__attribute__((noinline)) int scaled(int x, int factor) {
  int result = x * factor;
  result += factor;
  return result;
}

template <typename T>
__attribute__((noinline)) T twice(T x) {
  return x + x;
}

}  // namespace fixture

static __attribute__((noinline)) int file_local_helper(int x) {
  return x % 7 + 3;
}

extern "C" __attribute__((noinline)) int c_linkage_function(int x) {
  int sum = 0;
  for (int i = 0; i < x; ++i) sum += i;
  return sum;
}

int main(int argc, char**) {
  fixture::Counter counter;
  counter.add(argc);
  int total = fixture::scaled(argc, 3) + fixture::twice(argc) + file_local_helper(argc);
  total += c_linkage_function(argc) + static_cast<int>(fixture::twice(1.5));
  std::printf("%d %d\n", total, counter.value);
  return 0;
}
