#include "runtime/module_map.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <cstring>

#include "runtime/own_proc_files.h"

namespace lockscope::runtime {
namespace {

void read_build_id(const dl_phdr_info* info, const ElfW(Phdr) & note_segment,
                   LoadedModule& module) {
  const auto* cursor =
      reinterpret_cast<const unsigned char*>(info->dlpi_addr + note_segment.p_vaddr);
  const unsigned char* end = cursor + note_segment.p_memsz;
  while (cursor + sizeof(ElfW(Nhdr)) <= end) {
    const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(cursor);
    const unsigned char* name = cursor + sizeof(ElfW(Nhdr));
    const unsigned char* desc = name + ((note->n_namesz + 3) & ~3u);
    if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
        std::memcmp(name, "GNU", 4) == 0) {
      const uint32_t size = note->n_descsz < 20 ? note->n_descsz : 20;
      std::memcpy(module.build_id, desc, size);
      module.build_id_size = size;
      return;
    }
    cursor = desc + ((note->n_descsz + 3) & ~3u);
  }
}

int add_module(dl_phdr_info* info, size_t, void* data) {
  auto& list = *static_cast<ModuleList*>(data);
  if (list.count >= ModuleList::kMaxModules) return 0;
  LoadedModule& module = list.modules[list.count];
  std::memset(&module, 0, sizeof(module));
  module.load_bias = info->dlpi_addr;
  module.start = UINT64_MAX;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type == PT_LOAD) {
      const uint64_t begin = info->dlpi_addr + segment.p_vaddr;
      if (begin < module.start) module.start = begin;
      if (begin + segment.p_memsz > module.end) module.end = begin + segment.p_memsz;
      if (segment.p_flags & PF_X) {
        if (module.code_end == 0 || begin < module.code_start) module.code_start = begin;
        if (begin + segment.p_memsz > module.code_end) module.code_end = begin + segment.p_memsz;
      }
    } else if (segment.p_type == PT_NOTE && module.build_id_size == 0) {
      read_build_id(info, segment, module);
    }
  }
  if (module.start == UINT64_MAX) return 0;
  const char* name = info->dlpi_name;
  if (list.count == 0 && (!name || !*name)) {
    // The main program: dl_iterate_phdr gives it no name.
    const ssize_t n = read_own_executable_path(module.path, sizeof(module.path) - 1);
    module.path[n > 0 ? n : 0] = '\0';
  } else if (name) {
    std::strncpy(module.path, name, sizeof(module.path) - 1);
  }
  ++list.count;
  return 0;
}

}  // namespace

bool ModuleList::collect() {
  if (!storage.reserve(sizeof(LoadedModule) * kMaxModules)) return false;
  modules = reinterpret_cast<LoadedModule*>(storage.data());
  count = 0;
  dl_iterate_phdr(add_module, this);
  return true;
}

uint32_t ModuleList::find(uint64_t address) const {
  // A return address after a call that ends the code is its end: inclusive.
  for (uint32_t i = 0; i < count; ++i)
    if (address >= modules[i].code_start && address <= modules[i].code_end &&
        modules[i].code_end != 0)
      return i;
  for (uint32_t i = 0; i < count; ++i)
    if (address >= modules[i].start && address < modules[i].end) return i;
  return format::kNoModule;
}

}  // namespace lockscope::runtime
