// The member of a global object that holds a lock, from DWARF types: `_PyRuntime+0x1b8` is
// `_PyRuntime.ceval.gil.mutex`, `stripes+0x50` is `stripes[2]`. The global variables of a module
// (their DIEs: top level and inside namespaces, with a fixed DW_OP_addr location) are indexed by
// address once, on the first lookup that needs them; each lookup then walks the variable's type
// down through structure members and array elements to the object of the lock's size.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace lockscope {

class DwarfGlobals {
 public:
  // `dwarf` and its bias (dwarf address = dwfl address - bias), as libdwfl gives them.
  DwarfGlobals(Dwarf* dwarf, Dwarf_Addr bias) : dwarf_(dwarf), bias_(bias) {}

  // ".ceval.gil.mutex" or "[2]" (appended to the symbol's name) for the object of `object_size`
  // bytes at `offset` into the global whose symbol starts at `dwfl_start`; nullopt when the
  // variable or its type is not described, or no member lies there.
  std::optional<std::string> member_path(Dwarf_Addr dwfl_start, uint64_t offset,
                                         uint64_t object_size);

 private:
  void index();
  Dwarf* dwarf_;
  Dwarf_Addr bias_;
  bool indexed_ = false;
  std::unordered_map<Dwarf_Addr, Dwarf_Off> variables_;  // dwarf address -> variable DIE offset
};

}  // namespace lockscope
