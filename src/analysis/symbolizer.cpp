#include "analysis/symbolizer.h"

#include <elfutils/libdwfl.h>
#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "analysis/dwarf_member_path.h"
#include "analysis/dwarf_scope_index.h"
#include "analysis/elf_symbol_index.h"
#include "analysis/regular_file.h"

namespace lockscope {

namespace {

std::string_view base_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Lower-case hex digits only, so that "A91136FA..." or "a9:11:36..." compare equal to libdwfl's.
std::string normalized_build_id(std::string_view text) {
  std::string hex;
  for (char c : text) {
    if (std::isxdigit(static_cast<unsigned char>(c))) {
      hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return hex;
}

std::string build_id_of(Dwfl_Module* module) {
  const unsigned char* bits = nullptr;
  GElf_Addr note_vaddr = 0;
  int length = dwfl_module_build_id(module, &bits, &note_vaddr);
  std::string hex;
  for (int i = 0; i < length; ++i) hex += fmt::format("{:02x}", bits[i]);
  return hex;
}

// nullptr: libdwfl's default search path ":.debug:/usr/lib/debug", which with the build-id lookup
// of dwfl_standard_find_debuginfo() finds Debian's /usr/lib/debug/.build-id/xx/yyyy.debug files.
// (It also honours DEBUGINFOD_URLS when set, as every elfutils tool does.)
char* debuginfo_search_path = nullptr;
const Dwfl_Callbacks kOfflineCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_search_path,
};

struct DwflDeleter {
  void operator()(Dwfl* dwfl) const { dwfl_end(dwfl); }
};

// One opened module. Symbolizer::ModuleData (private in the header) is this, so that the helpers
// below can name it.
struct LoadedModule {
  std::string path;
  std::string untrusted_reason;  // non-empty: the file is not used at all
  std::unique_ptr<Dwfl, DwflDeleter> dwfl;
  Dwfl_Module* module = nullptr;  // null when untrusted
  Dwarf_Addr elf_bias = 0;        // dwfl address = ELF vaddr + elf_bias

  // Everything below is built lazily, on the first address that needs it.
  bool dwarf_opened = false;
  Dwarf* dwarf = nullptr;  // main file's or separate debuginfo's; null without DWARF
  Dwarf_Addr dwarf_bias = 0;
  std::optional<DwarfUnitRanges> unit_ranges;
  std::unordered_map<Dwarf_Off, std::unique_ptr<DwarfScopeIndex>> scopes_by_unit;
  std::optional<ElfSymbolIndex> symbols;
  std::optional<ElfSymbolIndex> objects;  // data objects, for lock names
  std::optional<DwarfGlobals> globals;    // ... and the members of those that hold a lock
  std::unordered_map<uint64_t, SymbolizedAddress> by_address;
};

void open_module(LoadedModule& data, const ModuleIdentity& identity) {
  Dwfl* dwfl = dwfl_begin(&kOfflineCallbacks);
  if (dwfl == nullptr) {
    data.untrusted_reason = fmt::format("libdwfl: {}", dwfl_errmsg(-1));
    return;
  }
  data.dwfl.reset(dwfl);
  // Opened here, not by libdwfl: a profile's module path may name a FIFO (libdwfl's open() would
  // wait for a writer for ever), a device or a directory. Only a regular file is given to it.
  RegularFile file;
  if (std::string problem = file.open(identity.path); !problem.empty()) {
    data.untrusted_reason = problem.starts_with("cannot open: ")
                                ? "unreadable: " + problem.substr(std::strlen("cannot open: "))
                                : problem;
    data.dwfl.reset();
    return;
  }
  dwfl_report_begin(dwfl);
  std::string name(base_name(identity.path));
  Dwfl_Module* module = dwfl_report_offline(dwfl, name.c_str(), identity.path.c_str(), file.fd());
  if (module != nullptr) file.release();  // libdwfl owns (and closes) it now
  std::string report_error = module == nullptr ? dwfl_errmsg(-1) : "";
  dwfl_report_end(dwfl, nullptr, nullptr);
  if (module == nullptr) {
    data.untrusted_reason = fmt::format("unreadable: {}", report_error);
    data.dwfl.reset();
    return;
  }
  if (!identity.build_id_hex.empty()) {
    std::string expected = normalized_build_id(identity.build_id_hex);
    std::string actual = build_id_of(module);
    // A rebuilt or upgraded file at the same path would give confident, wrong lines: refuse it.
    if (actual != expected) {
      data.untrusted_reason =
          actual.empty() ? "file has no build-id to verify" : "build-id mismatch";
      data.dwfl.reset();
      return;
    }
  }
  if (dwfl_module_getelf(module, &data.elf_bias) == nullptr) {
    data.untrusted_reason = fmt::format("unreadable: {}", dwfl_errmsg(-1));
    data.dwfl.reset();
    return;
  }
  data.module = module;
}

Dwarf* module_dwarf(LoadedModule& data) {
  if (!data.dwarf_opened) {
    data.dwarf_opened = true;
    // Finds a separate debuginfo file here (build-id, then .gnu_debuglink), not at open time:
    // a module whose every call site resolves from the symbol table never pays for the search.
    data.dwarf = dwfl_module_getdwarf(data.module, &data.dwarf_bias);
  }
  return data.dwarf;
}

std::optional<Dwarf_Die> unit_at(LoadedModule& data, Dwarf_Addr dwfl_addr) {
  Dwarf_Addr bias = 0;
  // libdwfl may answer with the unit before a gap (crt's _start after main): its line table's
  // last row would then name a line of code the address is not in.
  if (Dwarf_Die* unit_die = dwfl_module_addrdie(data.module, dwfl_addr, &bias)) {
    if (dwarf_haspc(unit_die, dwfl_addr - bias) > 0) return *unit_die;
  }
  if (!data.unit_ranges) data.unit_ranges.emplace(data.dwarf);
  return data.unit_ranges->find(dwfl_addr - data.dwarf_bias);
}

DwarfScopeIndex& scopes_of(LoadedModule& data, Dwarf_Die unit_die) {
  std::unique_ptr<DwarfScopeIndex>& scopes = data.scopes_by_unit[dwarf_dieoffset(&unit_die)];
  if (!scopes) scopes = std::make_unique<DwarfScopeIndex>(unit_die);
  return *scopes;
}

void fill_from_symbol_table(LoadedModule& data, Dwarf_Addr dwfl_addr, SymbolizedAddress& result) {
  if (!data.symbols) data.symbols.emplace(data.module);
  if (std::optional<ElfSymbolHit> hit = data.symbols->find(dwfl_addr)) {
    result.symbol = demangle_symbol(hit->name);
    result.symbol_offset = hit->offset;
  }
}

// Fills frames (innermost first) from the CU's line table and scope index.
void fill_from_dwarf(LoadedModule& data, Dwarf_Addr dwfl_addr, SymbolizedAddress& result) {
  if (module_dwarf(data) == nullptr) return;
  std::optional<Dwarf_Die> unit_die = unit_at(data, dwfl_addr);
  if (!unit_die) return;
  Dwarf_Addr dwarf_addr = dwfl_addr - data.dwarf_bias;

  SourceFrame innermost;
  if (Dwarf_Line* line = dwarf_getsrc_die(&*unit_die, dwarf_addr)) {
    if (const char* file = dwarf_linesrc(line, nullptr, nullptr)) innermost.file = file;
    dwarf_lineno(line, &innermost.line);
    dwarf_linecol(line, &innermost.column);
    result.has_debug_info = true;
  }

  DwarfScopeIndex& scopes = scopes_of(data, *unit_die);
  std::vector<int> chain = scopes.chain_at(dwarf_addr);
  if (chain.empty()) {
    result.frames = {innermost};
    return;
  }
  result.has_debug_info = true;
  result.frames.clear();
  result.frames.reserve(chain.size());
  // The innermost frame's location is where the code is (the line table); every outer frame's is
  // the call site of the scope it inlined.
  SourceFrame location = innermost;
  for (int scope_index : chain) {
    location.function = scopes.function_name(scope_index);
    result.frames.push_back(location);
    const DwarfScope& scope = scopes.scope(scope_index);
    location = SourceFrame{};
    location.file = scope.call_file != nullptr ? scope.call_file : "";
    location.line = scope.call_line;
    location.column = scope.call_column;
  }
  // GCC gives static C++ functions only a bare DW_AT_name ("helper"). The ELF symbol of the
  // function that physically holds the address is mangled with the parameter list, which is what
  // every other C++ frame shows (and llvm-symbolizer --functions=linkage prints).
  if (!scopes.has_linkage_name(chain.back())) {
    if (!data.symbols) data.symbols.emplace(data.module);
    std::optional<ElfSymbolHit> hit = data.symbols->find(dwfl_addr);
    if (hit && std::strncmp(hit->name, "_Z", 2) == 0) {
      result.symbol = demangle_symbol(hit->name);
      result.symbol_offset = hit->offset;
      result.frames.back().function = result.symbol;
    }
  }
}

SymbolizedAddress look_up(LoadedModule& data, uint64_t elf_vaddr) {
  SymbolizedAddress result;
  result.module = data.path;
  result.offset = elf_vaddr;
  result.untrusted_reason = data.untrusted_reason;
  result.frames.emplace_back();
  if (data.module == nullptr) return result;

  Dwarf_Addr dwfl_addr = elf_vaddr + data.elf_bias;
  fill_from_dwarf(data, dwfl_addr, result);
  if (result.frames.front().function.empty()) fill_from_symbol_table(data, dwfl_addr, result);
  return result;
}

}  // namespace

struct Symbolizer::ModuleData : LoadedModule {};

std::string SymbolizedAddress::label() const {
  std::string module_name(base_name(module));
  if (module_name.empty()) module_name = "[unknown module]";
  const SourceFrame* innermost = frames.empty() ? nullptr : &frames.front();
  std::string text;
  if (innermost != nullptr && !innermost->function.empty()) {
    text = innermost->function;
    if (innermost->line > 0) {
      text += fmt::format(" {}:{}", base_name(innermost->file), innermost->line);
    } else {
      text += fmt::format(" ({})", module_name);
    }
    if (frames.size() > 1 && !frames.back().function.empty() &&
        frames.back().function != innermost->function) {  // never "inlined into" itself
      text += fmt::format(" (inlined into {})", frames.back().function);
    }
  } else if (!symbol.empty()) {
    text = fmt::format("{}+{:#x} ({})", symbol, symbol_offset, module_name);
  } else {
    text = fmt::format("{}+{:#x}", module_name, offset);
  }
  if (innermost != nullptr && innermost->function.empty() && innermost->line > 0) {
    text += fmt::format(" {}:{}", base_name(innermost->file), innermost->line);
  }
  if (!untrusted_reason.empty()) text += fmt::format(" [{}]", untrusted_reason);
  return text;
}

Symbolizer::Symbolizer() = default;
Symbolizer::~Symbolizer() = default;

Symbolizer::ModuleData& Symbolizer::module_data(const ModuleIdentity& module) {
  // Keyed by path and expected build-id: two profiles may name the same path for different builds,
  // and only the one whose build-id matches may use the file.
  std::string key = module.path + '\0' + normalized_build_id(module.build_id_hex);
  std::unique_ptr<ModuleData>& data = modules_[key];
  if (!data) {
    data = std::make_unique<ModuleData>();
    data->path = module.path;
    open_module(*data, module);
  }
  return *data;
}

SymbolizedAddress Symbolizer::symbolize(const ModuleIdentity& module, uint64_t elf_vaddr) {
  ModuleData& data = module_data(module);
  auto cached = data.by_address.find(elf_vaddr);
  if (cached != data.by_address.end()) return cached->second;
  SymbolizedAddress result = look_up(data, elf_vaddr);
  data.by_address.emplace(elf_vaddr, result);
  return result;
}

std::optional<DataSymbol> Symbolizer::data_symbol(const ModuleIdentity& module, uint64_t elf_vaddr,
                                                  uint64_t object_size) {
  ModuleData& data = module_data(module);
  if (data.module == nullptr)
    return std::nullopt;  // untrusted: its symbols could be another build's
  if (!data.objects) data.objects.emplace(data.module, ElfSymbolKind::kObjects);
  const Dwarf_Addr dwfl_addr = elf_vaddr + data.elf_bias;
  std::optional<ElfSymbolHit> hit = data.objects->find(dwfl_addr);
  if (!hit) return std::nullopt;
  DataSymbol symbol{demangle_symbol(hit->name), hit->offset, {}};
  {  // also at offset 0: a struct's first member ("counters.reads_lock", not "counters")
    if (!data.globals) data.globals.emplace(module_dwarf(data), data.dwarf_bias);
    symbol.member =
        data.globals->member_path(dwfl_addr - hit->offset, hit->offset, object_size).value_or("");
  }
  return symbol;
}

}  // namespace lockscope
