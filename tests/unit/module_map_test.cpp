// The runtime's module map (runtime/module_map.h): which module a return address is in.
#include "runtime/module_map.h"

#include <gtest/gtest.h>

#include <cstring>

namespace lockscope::runtime {
namespace {

LoadedModule module_at(uint64_t start, uint64_t code_end, uint64_t end, const char* path) {
  LoadedModule module{};
  module.load_bias = start;
  module.start = start;
  module.code_start = start + 0x1000;
  module.code_end = code_end;
  module.end = end;
  std::strncpy(module.path, path, sizeof(module.path) - 1);
  return module;
}

// Two unloaded plugins: a big one (4 MiB of .bss), then a small one loaded into that room. A site
// of the small one is in the small one, though the big one's whole range holds it too.
TEST(ModuleMap, AReturnAddressIsInTheModuleWhoseCodeHoldsIt) {
  LoadedModule modules[2] = {module_at(0x10000000, 0x10002000, 0x10410000, "big.so"),
                             module_at(0x10300000, 0x10302000, 0x10305000, "small.so")};
  ModuleList list;
  list.modules = modules;
  list.count = 2;
  EXPECT_EQ(list.find(0x10001800), 0u);
  EXPECT_EQ(list.find(0x10301800), 1u);
  EXPECT_EQ(list.find(0x10302000), 1u) << "a call that ends the code returns to its end";
  EXPECT_EQ(list.find(0x10200000), 0u) << "outside all code: the range that holds it";
  EXPECT_EQ(list.find(0x20000000), format::kNoModule);
  list.modules = nullptr;  // not the list's storage
}

// The real map: this test's own code is in its first module, the executable.
TEST(ModuleMap, OwnCodeIsInTheExecutable) {
  ModuleList list;
  ASSERT_TRUE(list.collect());
  ASSERT_GT(list.count, 0u);
  const auto own = reinterpret_cast<uint64_t>(__builtin_return_address(0));
  EXPECT_EQ(list.find(own), 0u);
  EXPECT_LT(list.modules[0].code_start, list.modules[0].code_end);
  EXPECT_LE(list.modules[0].start, list.modules[0].code_start);
  EXPECT_LE(list.modules[0].code_end, list.modules[0].end);
}

}  // namespace
}  // namespace lockscope::runtime
