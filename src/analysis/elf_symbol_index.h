// ElfSymbolIndex: the function symbols of one module (.symtab, else .dynsym, plus a MiniDebugInfo
// .gnu_debugdata table when present), sorted by address for a binary search per lookup; or, built
// with ElfSymbolKind::kObjects, its data objects (what a lock in .data or .bss is named after).
//
// Why not dwfl_module_addrinfo() per address: it scans the whole symbol table linearly on every
// call, which for a 100k-symbol binary and a few thousand call sites is seconds, not milliseconds.
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace lockscope {

struct ElfSymbolHit {
  const char* name;   // mangled; owned by libelf, lives as long as the Dwfl
  Dwarf_Addr offset;  // address - symbol start
};

enum class ElfSymbolKind { kFunctions, kObjects };

class ElfSymbolIndex {
 public:
  explicit ElfSymbolIndex(Dwfl_Module* module, ElfSymbolKind kind = ElfSymbolKind::kFunctions);
  // `dwfl_addr` is in the Dwfl's address space (ELF vaddr + bias), like the symbol values.
  std::optional<ElfSymbolHit> find(Dwarf_Addr dwfl_addr) const;
  bool empty() const { return symbols_.empty(); }

 private:
  struct Symbol {
    Dwarf_Addr start;
    Dwarf_Addr size;  // 0 for symbols without a size (hand-written assembly)
    const char* name;
    bool global;
  };
  std::vector<Symbol> symbols_;  // sorted by start; one symbol per start address
};

}  // namespace lockscope
