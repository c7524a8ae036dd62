#include "analysis/dwarf_member_path.h"

#include <dwarf.h>
#include <fmt/core.h>

#include <vector>

namespace lockscope {
namespace {

// A fixed location: where a global variable lives (not a TLS or computed one). GCC writes
// DW_OP_addr; clang's DWARF 5 DW_OP_addrx, an index into .debug_addr.
std::optional<Dwarf_Addr> fixed_address(Dwarf_Die* variable) {
  Dwarf_Attribute attribute;
  if (dwarf_attr(variable, DW_AT_location, &attribute) == nullptr) return std::nullopt;
  Dwarf_Op* ops = nullptr;
  size_t count = 0;
  if (dwarf_getlocation(&attribute, &ops, &count) != 0 || count != 1) return std::nullopt;
  if (ops[0].atom == DW_OP_addr) return ops[0].number;
  if (ops[0].atom == DW_OP_addrx || ops[0].atom == DW_OP_GNU_addr_index) {
    Dwarf_Attribute indexed;
    Dwarf_Addr address = 0;
    if (dwarf_getlocation_attr(&attribute, &ops[0], &indexed) == 0 &&
        dwarf_formaddr(&indexed, &address) == 0)
      return address;
  }
  return std::nullopt;
}

// The element counts of an array type's dimensions, outermost first (empty when one is unknown).
std::vector<uint64_t> dimensions(Dwarf_Die* array) {
  std::vector<uint64_t> counts;
  Dwarf_Die child;
  if (dwarf_child(array, &child) != 0) return {};
  do {
    if (dwarf_tag(&child) != DW_TAG_subrange_type) continue;
    Dwarf_Attribute attribute;
    Dwarf_Word value = 0;
    if (dwarf_attr(&child, DW_AT_count, &attribute) && dwarf_formudata(&attribute, &value) == 0)
      counts.push_back(value);
    else if (dwarf_attr(&child, DW_AT_upper_bound, &attribute) &&
             dwarf_formudata(&attribute, &value) == 0)
      counts.push_back(value + 1);
    else
      return {};
  } while (dwarf_siblingof(&child, &child) == 0);
  return counts;
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
  // A bitfield holds no lock.
  if (dwarf_hasattr(member, DW_AT_bit_size) || dwarf_hasattr(member, DW_AT_data_bit_offset))
    return std::nullopt;
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
      // One index per dimension ([1][3] of a [4][8] array, not [11]).
      uint64_t flat = offset / *element_size;
      const std::vector<uint64_t> counts = dimensions(&type);
      std::vector<uint64_t> indexes(counts.size() > 1 ? counts.size() : 1);
      for (size_t d = indexes.size(); d-- > 1;) {
        indexes[d] = counts[d] == 0 ? 0 : flat % counts[d];
        flat = counts[d] == 0 ? 0 : flat / counts[d];
      }
      indexes[0] = flat;
      for (uint64_t index : indexes) path += fmt::format("[{}]", index);
      offset %= *element_size;
      type = element;
      continue;
    }
    if (tag != DW_TAG_structure_type && tag != DW_TAG_class_type && tag != DW_TAG_union_type)
      return std::nullopt;
    // The member whose bytes cover the offset; of a union's overlapping members, the one that
    // starts there with the lock's size (union { char pad[64]; pthread_mutex_t m; } holds m).
    Dwarf_Die member, chosen, chosen_type;
    std::optional<uint64_t> chosen_at;
    bool exact = false;
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
        const bool fits = *at == offset && *member_size == object_size;
        if (chosen_at && (exact || !fits)) continue;
        chosen = member;
        chosen_type = member_type;
        chosen_at = at;
        exact = fits;
      } while (dwarf_siblingof(&member, &member) == 0);
    }
    if (!chosen_at) return std::nullopt;
    const char* name = dwarf_diename(&chosen);
    if (dwarf_tag(&chosen) == DW_TAG_member && name != nullptr) path += fmt::format(".{}", name);
    offset -= *chosen_at;
    type = chosen_type;
  }
  return std::nullopt;
}

}  // namespace lockscope
