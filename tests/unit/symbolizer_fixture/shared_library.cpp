// Symbolizer fixture: a shared library (ET_DYN, position independent, not an executable).
namespace fixture_library {

__attribute__((noinline)) int library_function(int x) {
  int result = x * 5;
  result ^= 0x55;
  return result;
}

}  // namespace fixture_library

extern "C" int exported_entry(int x) {
  return fixture_library::library_function(x) + 1;
}
