#include "analysis/dwarf_member_path.h"

#include <dwarf.h>
#include <fmt/core.h>

#include <vector>

namespace lockscope {
namespace {

// A DW_OP_addr location: where a global variable lives (not a TLS or computed one).
std::optional<Dwarf_Addr> fixed_address(Dwarf_Die* variable) {
  Dwarf_Attribute attribute;
  if (dwarf_attr(variable, DW_AT_location, &attribute) == nullptr) return std::nullopt;
  Dwarf_Op* ops = nullptr;
  size_t count = 0;
  if (dwarf_getlocation(&attribute, &ops, &count) != 0 || count != 1 || ops[0].atom != DW_OP_addr)
    return std::nullopt;
  return ops[0].number;
}

bool type_of(Dwarf_Die* die, Dwarf_Die* type) {
  Dwarf_Attribute attribute;
  return dwarf_attr_integrate(die, DW_AT_type, &attribute) != nullptr &&
         dwarf_formref_die(&attribute, type) != nullptr;
}

// Through typedefs and qualifiers to the type that has a layout.
bool strip(Dwarf_Die* type) {
  for (int depth = 0; depth < 32; ++depth) {
    switch (dwarf_tag(type)) {
      case DW_TAG_typedef:
      case DW_TAG_const_type:
      case DW_TAG_volatile_type:
      case DW_TAG_restrict_type:
      case DW_TAG_atomic_type:
        if (!type_of(type, type)) return false;
        break;
      default:
        return true;
    }
  }
  return false;
}

std::optional<uint64_t> byte_size(Dwarf_Die* type) {
  Dwarf_Word size = 0;
  if (dwarf_aggregate_size(type, &size) != 0) return std::nullopt;
  return size;
}

std::optional<uint64_t> member_offset(Dwarf_Die* member) {
  Dwarf_Attribute attribute;
  Dwarf_Word offset = 0;
  if (dwarf_attr(member, DW_AT_data_member_location, &attribute) == nullptr)
    return 0;  // a union's members all start at 0
  if (dwarf_formudata(&attribute, &offset) != 0) return std::nullopt;
  return offset;
}

}  // namespace

void DwarfGlobals::index() {
  indexed_ = true;
  Dwarf_Off unit = 0, next = 0;
  size_t header_size = 0;
  while (dwarf_nextcu(dwarf_, unit, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die unit_die;
    if (dwarf_offdie(dwarf_, unit + header_size, &unit_die) != nullptr) {
      std::vector<Dwarf_Die> scopes = {unit_die};
      while (!scopes.empty()) {  // the unit and its namespaces; no function bodies
        Dwarf_Die scope = scopes.back(), child;
        scopes.pop_back();
        if (dwarf_child(&scope, &child) != 0) continue;
        do {
          const int tag = dwarf_tag(&child);
          if (tag == DW_TAG_namespace) scopes.push_back(child);
          if (tag == DW_TAG_variable)
            if (std::optional<Dwarf_Addr> at = fixed_address(&child))
              variables_.emplace(*at, dwarf_dieoffset(&child));
        } while (dwarf_siblingof(&child, &child) == 0);
      }
    }
    unit = next;
  }
}

std::optional<std::string> DwarfGlobals::member_path(Dwarf_Addr dwfl_start, uint64_t offset,
                                                     uint64_t object_size) {
  if (dwarf_ == nullptr) return std::nullopt;
  if (!indexed_) index();
  auto found = variables_.find(dwfl_start - bias_);
  Dwarf_Die variable, type;
  if (found == variables_.end() || dwarf_offdie(dwarf_, found->second, &variable) == nullptr ||
      !type_of(&variable, &type))
    return std::nullopt;
  std::string path;
  for (int depth = 0; depth < 16; ++depth) {
    if (!strip(&type)) return std::nullopt;
    const std::optional<uint64_t> size = byte_size(&type);
    if (!size || offset >= *size) return std::nullopt;
    // Down to the object the lock is: no bigger than it (a pthread_mutex_t is a union of its
    // size, a std::mutex a struct of its size: neither is looked into).
    if (offset == 0 && *size <= object_size)
      return path.empty() ? std::nullopt : std::optional(path);
    const int tag = dwarf_tag(&type);
    if (tag == DW_TAG_array_type) {
      Dwarf_Die element;
      if (!type_of(&type, &element) || !strip(&element)) return std::nullopt;
      const std::optional<uint64_t> element_size = byte_size(&element);
      if (!element_size || *element_size == 0) return std::nullopt;
      path += fmt::format("[{}]", offset / *element_size);
      offset %= *element_size;
      type = element;
      continue;
    }
    if (tag != DW_TAG_structure_type && tag != DW_TAG_class_type && tag != DW_TAG_union_type)
      return std::nullopt;
    Dwarf_Die member;
    bool descended = false;
    if (dwarf_child(&type, &member) == 0) {
      do {
        if (dwarf_tag(&member) != DW_TAG_member && dwarf_tag(&member) != DW_TAG_inheritance)
          continue;
        const std::optional<uint64_t> at = member_offset(&member);
        Dwarf_Die member_type;
        if (!at || *at > offset || !type_of(&member, &member_type)) continue;
        Dwarf_Die stripped = member_type;
        if (!strip(&stripped)) continue;
        const std::optional<uint64_t> member_size = byte_size(&stripped);
        if (!member_size || offset - *at >= *member_size) continue;
        const char* name = dwarf_diename(&member);
        if (dwarf_tag(&member) == DW_TAG_member && name != nullptr)
          path += fmt::format(".{}", name);
        offset -= *at;
        type = member_type;
        descended = true;
        break;
      } while (dwarf_siblingof(&member, &member) == 0);
    }
    if (!descended) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace lockscope
