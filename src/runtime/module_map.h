// The loaded modules (dl_iterate_phdr): path, load bias, address range and GNU build-id, so the CLI
// can turn return addresses into (module, ELF address) and symbolize them later.
#pragma once

#include <cstdint>

#include "common/profile_format.h"
#include "runtime/byte_buffer.h"

namespace lockscope::runtime {

struct LoadedModule {
  uint64_t load_bias;
  uint64_t start;
  uint64_t end;
  uint64_t code_start;  // the executable segments' span: where return addresses can be
  uint64_t code_end;
  char path[512];
  uint32_t build_id_size;
  uint8_t build_id[20];
};

struct ModuleList {
  static constexpr uint32_t kMaxModules = 1024;
  LoadedModule* modules = nullptr;  // in `storage`
  uint32_t count = 0;
  ByteBuffer storage;

  bool collect();
  // Index of the module whose code holds the return address `address` (the first such: loaded
  // modules come before unloaded ones), else of the first whose range holds it, or
  // format::kNoModule. A whole range includes .bss: a plugin unloaded and another loaded into its
  // room left the later one's sites in the earlier one, at addresses of nothing there.
  uint32_t find(uint64_t address) const;
};

}  // namespace lockscope::runtime
