#include "analysis/dwarf_scope_index.h"

#include <cxxabi.h>
#include <dwarf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace lockscope {

std::string demangle_symbol(const char* name) {
  if (name == nullptr) return {};
  // Only Itanium mangled names: __cxa_demangle would also "demangle" plain C names such as "f"
  // into type names ("float").
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string result(demangled);
  std::free(demangled);
  return result;
}

namespace {

// Code ranges of a DIE, without the placeholders that linkers leave for discarded (gc'd, COMDAT)
// functions: low_pc 0 or the -1/-2 tombstones. A PIE never has code at 0 (the ELF header is there).
template <typename Visit>
void for_each_code_range(Dwarf_Die* die, Visit&& visit) {
  Dwarf_Addr base = 0, start = 0, end = 0;
  ptrdiff_t offset = 0;
  while ((offset = dwarf_ranges(die, offset, &base, &start, &end)) > 0) {
    if (start == 0 || start >= end || start >= std::numeric_limits<Dwarf_Addr>::max() - 1) continue;
    visit(start, end);
  }
}

int attribute_int(Dwarf_Die* die, unsigned int name) {
  Dwarf_Attribute attribute;
  Dwarf_Word value = 0;
  if (dwarf_attr(die, name, &attribute) == nullptr || dwarf_formudata(&attribute, &value) != 0) {
    return 0;
  }
  return static_cast<int>(value);
}

bool owns_code_scope(int tag) {
  return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

// A type's DIEs outside any function: member declarations, template parameters, enumerators,
// most of a C++ CU's DIEs, and never code (GCC writes the definitions of members as subprograms
// of the CU or its namespaces). Inside a function, a local class may hold code (a lambda's
// operator()), so there it is walked.
bool is_type_outside_code(int tag, bool in_function) {
  return !in_function && (tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
                          tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type);
}

}  // namespace

DwarfScopeIndex::DwarfScopeIndex(Dwarf_Die cu_die) : dwarf_(dwarf_cu_getdwarf(cu_die.cu)) {
  Dwarf_Files* files = nullptr;
  size_t file_count = 0;
  if (dwarf_getsrcfiles(&cu_die, &files, &file_count) != 0) files = nullptr;

  // Iterative depth-first walk: the DIE tree of a big C++ CU is deep enough (namespaces, classes,
  // lexical blocks) that recursion per DIE is best avoided, and the explicit stack carries the
  // nearest enclosing code scope.
  struct Pending {
    Dwarf_Die die;
    int parent_scope;
    bool in_function;  // inside a subprogram's DIE (an abstract one too)
  };
  std::vector<Pending> pending;
  Dwarf_Die child;
  if (dwarf_child(&cu_die, &child) == 0) pending.push_back({child, -1, false});
  while (!pending.empty()) {
    Pending current = pending.back();
    pending.pop_back();
    Dwarf_Die sibling;
    if (dwarf_siblingof(&current.die, &sibling) == 0) {
      pending.push_back({sibling, current.parent_scope, current.in_function});
    }

    int scope_for_children = current.parent_scope;
    int tag = dwarf_tag(&current.die);
    if (owns_code_scope(tag)) {
      DwarfScope scope;
      scope.die_offset = dwarf_dieoffset(&current.die);
      scope.inlined = tag == DW_TAG_inlined_subroutine;
      // A subprogram nested in another one's DIE (a local class's or lambda's out-of-line member)
      // is separate code, not inlined into it: it starts a chain of its own.
      scope.parent = scope.inlined ? current.parent_scope : -1;
      scope.depth = scope.parent < 0 ? 0 : scopes_[scope.parent].depth + 1;
      if (scope.inlined) {
        int call_file = attribute_int(&current.die, DW_AT_call_file);
        if (files != nullptr && call_file >= 0 && static_cast<size_t>(call_file) < file_count) {
          scope.call_file = dwarf_filesrc(files, static_cast<size_t>(call_file), nullptr, nullptr);
        }
        scope.call_line = attribute_int(&current.die, DW_AT_call_line);
        scope.call_column = attribute_int(&current.die, DW_AT_call_column);
      }
      int index = static_cast<int>(scopes_.size());
      bool has_code = false;
      for_each_code_range(&current.die, [&](Dwarf_Addr low, Dwarf_Addr high) {
        ranges_.push_back({low, high, index});
        has_code = true;
      });
      // Declarations and abstract (DW_AT_inline) instances own no code and are not recorded, but
      // their subtree is still walked: a local class (a lambda) may keep code-owning DIEs there.
      if (has_code) {
        scopes_.push_back(scope);
        scope_for_children = index;
      }
    }
    if (!is_type_outside_code(tag, current.in_function) && dwarf_haschildren(&current.die) &&
        dwarf_child(&current.die, &child) == 0) {
      pending.push_back({child, scope_for_children, current.in_function || owns_code_scope(tag)});
    }
  }
  names_.resize(scopes_.size());

  std::sort(ranges_.begin(), ranges_.end(),
            [](const ScopeRange& a, const ScopeRange& b) { return a.low < b.low; });
  max_high_through_.reserve(ranges_.size());
  Dwarf_Addr max_high = 0;
  for (const ScopeRange& range : ranges_) {
    max_high = std::max(max_high, range.high);
    max_high_through_.push_back(max_high);
  }
}

std::vector<int> DwarfScopeIndex::chain_at(Dwarf_Addr dwarf_addr) const {
  // Every range starting at or before the address is a candidate; scanning backwards may stop as
  // soon as no earlier range reaches the address. The scan therefore covers only the scopes of
  // the function around the address, not the CU.
  auto first_after =
      std::upper_bound(ranges_.begin(), ranges_.end(), dwarf_addr,
                       [](Dwarf_Addr addr, const ScopeRange& range) { return addr < range.low; });
  int innermost = -1;
  for (auto i = first_after - ranges_.begin(); i-- > 0;) {
    if (max_high_through_[static_cast<size_t>(i)] <= dwarf_addr) break;
    const ScopeRange& range = ranges_[static_cast<size_t>(i)];
    if (range.high > dwarf_addr &&
        (innermost < 0 || scopes_[range.scope].depth > scopes_[innermost].depth)) {
      innermost = range.scope;
    }
  }
  std::vector<int> chain;
  for (int scope = innermost; scope >= 0; scope = scopes_[scope].parent) chain.push_back(scope);
  return chain;
}

DwarfUnitRanges::DwarfUnitRanges(Dwarf* dwarf) : dwarf_(dwarf) {
  Dwarf_CU* unit = nullptr;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0;
  Dwarf_Die unit_die;
  while (dwarf_get_units(dwarf, unit, &unit, &version, &unit_type, &unit_die, nullptr) == 0) {
    if (unit_type != DW_UT_compile && unit_type != DW_UT_partial) continue;
    Dwarf_Off offset = dwarf_dieoffset(&unit_die);
    for_each_code_range(&unit_die, [&](Dwarf_Addr low, Dwarf_Addr high) {
      ranges_.push_back({low, high, offset});
    });
  }
  std::sort(ranges_.begin(), ranges_.end(),
            [](const UnitRange& a, const UnitRange& b) { return a.low < b.low; });
}

std::optional<Dwarf_Die> DwarfUnitRanges::find(Dwarf_Addr dwarf_addr) const {
  auto first_after =
      std::upper_bound(ranges_.begin(), ranges_.end(), dwarf_addr,
                       [](Dwarf_Addr addr, const UnitRange& range) { return addr < range.low; });
  if (first_after == ranges_.begin() || (first_after - 1)->high <= dwarf_addr) return std::nullopt;
  Dwarf_Die unit_die;
  if (dwarf_offdie(dwarf_, (first_after - 1)->unit_die_offset, &unit_die) == nullptr) {
    return std::nullopt;
  }
  return unit_die;
}

const DwarfScopeIndex::ResolvedName& DwarfScopeIndex::resolved_name(int index) {
  std::optional<ResolvedName>& name = names_[static_cast<size_t>(index)];
  if (name) return *name;
  name.emplace();
  Dwarf_Die die;
  if (dwarf_offdie(dwarf_, scopes_[index].die_offset, &die) == nullptr) return *name;
  // dwarf_attr_integrate follows DW_AT_abstract_origin and DW_AT_specification, which is where an
  // inlined or out-of-line member function keeps its names.
  auto string_attribute = [&die](unsigned int attribute_name) -> const char* {
    Dwarf_Attribute attribute;
    if (dwarf_attr_integrate(&die, attribute_name, &attribute) == nullptr) return nullptr;
    return dwarf_formstring(&attribute);
  };
  const char* linkage_name = string_attribute(DW_AT_linkage_name);
  if (linkage_name == nullptr) linkage_name = string_attribute(DW_AT_MIPS_linkage_name);
  const char* plain_name = string_attribute(DW_AT_name);
  // A C++ linkage name demangles to the qualified name with parameters. Any other linkage name is
  // an asm label (glibc's "__GI__exit" for _exit): the source's own name reads better.
  if (linkage_name != nullptr &&
      (plain_name == nullptr || std::strncmp(linkage_name, "_Z", 2) == 0)) {
    name->text = demangle_symbol(linkage_name);
    name->is_linkage_name = true;
  } else if (plain_name != nullptr) {
    name->text = plain_name;
  }
  return *name;
}

}  // namespace lockscope
