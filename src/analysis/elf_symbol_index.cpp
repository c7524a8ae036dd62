#include "analysis/elf_symbol_index.h"

#include <gelf.h>

#include <algorithm>

namespace lockscope {

ElfSymbolIndex::ElfSymbolIndex(Dwfl_Module* module, ElfSymbolKind kind) {
  int count = dwfl_module_getsymtab(module);
  for (int i = 1; i < count; ++i) {
    GElf_Sym symbol;
    GElf_Addr address = 0;
    GElf_Word section = 0;
    Elf* elf = nullptr;
    Dwarf_Addr bias = 0;
    const char* name = dwfl_module_getsym_info(module, i, &symbol, &address, &section, &elf, &bias);
    if (name == nullptr || *name == '\0' || section == SHN_UNDEF) continue;
    int type = GELF_ST_TYPE(symbol.st_info);
    if (kind == ElfSymbolKind::kFunctions ? type != STT_FUNC && type != STT_GNU_IFUNC
                                          : type != STT_OBJECT || symbol.st_size == 0)
      continue;  // a sizeless object covers nothing we could name a lock after
    bool global = GELF_ST_BIND(symbol.st_info) != STB_LOCAL;
    symbols_.push_back({address, symbol.st_size, name, global});
  }
  // Aliases share a start address (memcpy / __memcpy_avx_unaligned ...): keep the one a reader
  // knows best — sized before sizeless, global before local.
  std::sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
    if (a.start != b.start) return a.start < b.start;
    if ((a.size != 0) != (b.size != 0)) return a.size != 0;
    return a.global && !b.global;
  });
  symbols_.erase(std::unique(symbols_.begin(), symbols_.end(),
                             [](const Symbol& a, const Symbol& b) { return a.start == b.start; }),
                 symbols_.end());
}

std::optional<ElfSymbolHit> ElfSymbolIndex::find(Dwarf_Addr dwfl_addr) const {
  auto first_after =
      std::upper_bound(symbols_.begin(), symbols_.end(), dwfl_addr,
                       [](Dwarf_Addr addr, const Symbol& symbol) { return addr < symbol.start; });
  if (first_after == symbols_.begin()) return std::nullopt;
  const Symbol& symbol = *(first_after - 1);
  // A sized symbol must contain the address: past its end lies code with no symbol (a stripped
  // static function), and "previous_function+0x4a0" would point the reader at the wrong code.
  if (symbol.size != 0 && dwfl_addr - symbol.start >= symbol.size) return std::nullopt;
  return ElfSymbolHit{symbol.name, dwfl_addr - symbol.start};
}

}  // namespace lockscope
