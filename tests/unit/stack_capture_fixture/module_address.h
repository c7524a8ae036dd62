// (module file, ELF virtual address) of a code address in this process, the form the symbolizer
// takes: for the stack capture tests and their fixture program.
#pragma once

#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace lockscope::stack_capture_testing {

struct ModuleAddress {
  std::string module;      // "" when no loaded module contains the address
  uint64_t elf_vaddr = 0;  // address - load bias
};

inline ModuleAddress module_address(uintptr_t address) {
  struct Search {
    uintptr_t address;
    ModuleAddress found;
  } search{address, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto& s = *static_cast<Search*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          const uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
          if (segment.p_type != PT_LOAD || s.address < begin ||
              s.address >= begin + segment.p_memsz)
            continue;
          s.found.elf_vaddr = s.address - info->dlpi_addr;
          s.found.module = info->dlpi_name ? info->dlpi_name : "";
          if (s.found.module.empty()) {  // the main program
            char path[4096];
            const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
            s.found.module.assign(path, n > 0 ? static_cast<size_t>(n) : 0);
          }
          return 1;
        }
        return 0;
      },
      &search);
  return search.found;
}

}  // namespace lockscope::stack_capture_testing
