// DwarfScopeIndex: for one compile unit, the scopes that own machine code — subprograms and
// inlined subroutines — with their address ranges flattened into one sorted vector, so that the
// inline chain at an address is a binary search plus a short backward scan.
//
// Why not dwarf_getscopes(): it walks the CU's DIE tree from the top for every address, which is
// O(DIEs in the CU) per lookup; a profile with thousands of call sites in a big C++ CU would
// re-walk it thousands of times. Here the tree is walked once per CU, on first use.
//
// Addresses are in the DWARF file's own address space (a dwfl address minus the Dwarf bias).
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lockscope {

// One level of an inline chain, as stored in the index.
struct DwarfScope {
  Dwarf_Off die_offset = 0;  // the subprogram / inlined_subroutine DIE; its name is resolved lazily
  bool inlined = false;
  // Where this scope was inlined into its parent scope (DW_AT_call_*); only when `inlined`.
  const char* call_file = nullptr;  // owned by libdw, lives as long as the Dwarf
  int call_line = 0;
  int call_column = 0;
  int parent = -1;  // index of the nearest enclosing scope that owns code, -1 at the top
  int depth = 0;    // number of enclosing scopes
};

class DwarfScopeIndex {
 public:
  // Walks the CU's DIE tree once.
  explicit DwarfScopeIndex(Dwarf_Die cu_die);

  // Scope indices at `dwarf_addr`, innermost first; empty when no scope covers it.
  std::vector<int> chain_at(Dwarf_Addr dwarf_addr) const;

  const DwarfScope& scope(int index) const { return scopes_[static_cast<size_t>(index)]; }
  // Demangled C++ linkage name, else DW_AT_name, following abstract origins; cached.
  const std::string& function_name(int index) { return resolved_name(index).text; }
  // False when the name is a bare DW_AT_name ("helper" for a static `int helper(int)`).
  bool has_linkage_name(int index) { return resolved_name(index).is_linkage_name; }

 private:
  struct ScopeRange {
    Dwarf_Addr low;
    Dwarf_Addr high;  // exclusive
    int scope;
  };

  struct ResolvedName {
    std::string text;
    bool is_linkage_name = false;
  };
  const ResolvedName& resolved_name(int index);

  Dwarf* dwarf_;
  std::vector<DwarfScope> scopes_;
  std::vector<std::optional<ResolvedName>> names_;  // parallel to scopes_, filled on demand
  std::vector<ScopeRange> ranges_;                  // sorted by low
  std::vector<Dwarf_Addr> max_high_through_;        // max of ranges_[0..i].high: stops the scan
};

// The address ranges of every compile unit, read once from the CU DIEs. A fallback for modules
// without .debug_aranges (clang does not emit it by default), where libdw 0.188's
// dwfl_module_addrdie() finds no CU at all.
class DwarfUnitRanges {
 public:
  explicit DwarfUnitRanges(Dwarf* dwarf);
  // The CU DIE whose ranges contain `dwarf_addr`.
  std::optional<Dwarf_Die> find(Dwarf_Addr dwarf_addr) const;

 private:
  struct UnitRange {
    Dwarf_Addr low;
    Dwarf_Addr high;  // exclusive
    Dwarf_Off unit_die_offset;
  };
  Dwarf* dwarf_;
  std::vector<UnitRange> ranges_;  // sorted by low; units do not overlap
};

// Demangles an Itanium C++ ABI name; returns it unchanged when it is not one.
std::string demangle_symbol(const char* name);

}  // namespace lockscope
