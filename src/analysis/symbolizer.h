// Symbolizer: (module file, ELF virtual address) -> function, file:line and the inline chain, using
// elfutils libdw. Never returns a blank: without debug info it falls back to the ELF symbol table
// (function+0xoff), and without that to module+0xoffset.
//
// Call sites recorded by the runtime are return addresses; callers pass `offset - 1` so that the
// line is that of the call instruction, not the one after it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lockscope {

struct SourceFrame {
  std::string function;  // demangled; "" only when unknown (then SymbolizedAddress::symbol may hold
                         // the ELF symbol-table fallback)
  std::string file;      // as recorded in DWARF (absolute when the compile dir is known)
  int line = 0;          // 0 when unknown
  int column = 0;
};

struct SymbolizedAddress {
  // Innermost first: frames[0] is the inlined callee whose code is at the address, the last frame
  // the function that physically contains it. Exactly one frame when nothing was inlined.
  std::vector<SourceFrame> frames;
  std::string module;   // path of the module
  uint64_t offset = 0;  // the address looked up (ELF vaddr)
  bool has_debug_info = false;
  // ELF symbol-table fallback (.symtab, else .dynsym), filled when DWARF names no function.
  std::string symbol;          // demangled; "" when no symbol covers the address
  uint64_t symbol_offset = 0;  // offset - start of `symbol`
  // Set when the file was not used although it was named: missing/unreadable, or its build-id does
  // not match the recorded one. The result is then module+offset only, and label() says why.
  std::string untrusted_reason;
  // A label that is never empty: "function file:line" when known, else "symbol+0x1f (module)",
  // else "module+0x1234".
  std::string label() const;
};

struct ModuleIdentity {
  std::string path;
  std::string
      build_id_hex;  // may be empty; when given, a file whose build-id differs is not trusted
};

// A data object's symbol (from .symtab, else .dynsym), demangled, and the offset into it.
struct DataSymbol {
  std::string name;
  uint64_t offset = 0;
  // Where DWARF describes the variable's type, the member at `offset`: ".ceval.gil.mutex",
  // "[2]", ".lock"; empty when it does not, or the variable is the lock itself.
  std::string member;
};

class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  SymbolizedAddress symbolize(const ModuleIdentity& module, uint64_t elf_vaddr);
  // The sized data object (STT_OBJECT) whose bytes cover `elf_vaddr`: what a global lock is
  // called in the source, and the member of it that is an object of `object_size` bytes (the
  // lock). nullopt when none does, or the file is not trusted.
  std::optional<DataSymbol> data_symbol(const ModuleIdentity& module, uint64_t elf_vaddr,
                                        uint64_t object_size);

 private:
  struct ModuleData;
  ModuleData& module_data(const ModuleIdentity& module);
  std::map<std::string, std::unique_ptr<ModuleData>> modules_;
};

}  // namespace lockscope
