// The symbolizer over whole modules: thousands of addresses spread over .text, each one named
// where nm says a function covers it, and the same addresses named as llvm-symbolizer names (the
// oracle of symbolizer_test.cpp). The speed is printed, never asserted.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/symbolizer.h"
#include "symbolizer_fixture/llvm_symbolizer_oracle.h"

namespace lockscope {
namespace {

using namespace symbolizer_oracle;

// [start, end) of the .text section, from readelf.
std::pair<uint64_t, uint64_t> text_section(const std::string& path) {
  std::istringstream lines(run_command("readelf -SW '" + path + "' 2>/dev/null"));
  std::string line;
  while (std::getline(lines, line)) {
    size_t name = line.find(" .text ");
    if (name == std::string::npos) continue;
    std::istringstream fields(line.substr(name + 7));
    std::string type, address, offset, size;
    fields >> type >> address >> offset >> size;
    uint64_t start = std::stoull(address, nullptr, 16);
    return {start, start + std::stoull(size, nullptr, 16)};
  }
  return {0, 0};
}

// What `count` addresses spread evenly over .text symbolize to, against what nm says of them.
struct TextSweep {
  size_t addresses = 0;
  size_t covered = 0;            // inside a sized function symbol of nm's (the independent count)
  size_t named = 0;              // given a function name by ours (DWARF, else the symbol table)
  size_t named_covered = 0;      // both
  size_t symbol_mismatch = 0;    // covered and named from the symbol table, but not nm's name
  size_t oracle_named = 0;       // given a function name by llvm-symbolizer (when installed)
  size_t only_oracle_named = 0;  // named by llvm-symbolizer, not by ours
  size_t only_ours_named = 0;    // named by ours, not by llvm-symbolizer
  std::string first_differences;
  std::string first_unnamed;  // a covered address ours leaves without a name
};

// A function name, from DWARF (the outermost frame: the function the code is in) or the symbols.
bool is_named(const SymbolizedAddress& ours) {
  return (!ours.frames.empty() && !ours.frames.back().function.empty()) || !ours.symbol.empty();
}

// The function symbol containing `address` (nm's symbols may overlap: aliases), or null.
const FunctionSymbol* containing(const std::vector<FunctionSymbol>& by_start, uint64_t address) {
  auto after = std::upper_bound(
      by_start.begin(), by_start.end(), address,
      [](uint64_t a, const FunctionSymbol& function) { return a < function.start; });
  for (auto it = after; it != by_start.begin();) {
    --it;
    if (address < it->start + it->size) return &*it;
    if (address - it->start > (1u << 24)) break;  // no function is 16 MB long
  }
  return nullptr;
}

// Symbolizes the sweep after opening the module with one lookup; prints addresses per second
// (CU indexes are built during the timed part). Speed is printed, not asserted.
TextSweep sweep_text(const std::string& path, size_t count, bool dynamic_symbols) {
  TextSweep sweep;
  auto [start, end] = text_section(path);
  EXPECT_LT(start, end) << "no .text in " << path;
  if (start >= end) return sweep;
  std::vector<FunctionSymbol> functions = function_symbols(path, dynamic_symbols);
  std::sort(functions.begin(), functions.end(),
            [](const FunctionSymbol& a, const FunctionSymbol& b) { return a.start < b.start; });
  Symbolizer symbolizer;
  EXPECT_FALSE(symbolizer.symbolize({path, ""}, start).label().empty());
  const uint64_t stride = std::max<uint64_t>(1, (end - start) / count);
  std::vector<SymbolizedAddress> results;
  auto begin = std::chrono::steady_clock::now();
  for (uint64_t address = start + 1; address < end; address += stride) {
    results.push_back(symbolizer.symbolize({path, ""}, address));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  for (const SymbolizedAddress& ours : results) {
    ++sweep.addresses;
    const bool named =
        (!ours.frames.empty() && !ours.frames.back().function.empty()) || !ours.symbol.empty();
    const FunctionSymbol* function = containing(functions, ours.offset);
    sweep.named += named;
    sweep.covered += function != nullptr;
    sweep.named_covered += named && function != nullptr;
    if (function != nullptr && !named && sweep.first_unnamed.empty()) {
      sweep.first_unnamed =
          fmt::format("0x{:x} in {}: {}", ours.offset, function->name, ours.label());
    }
    const bool from_symbol_table = ours.frames.empty() || ours.frames.back().function.empty();
    if (function != nullptr && named && from_symbol_table && ours.symbol != function->name) {
      ++sweep.symbol_mismatch;
    }
  }
  if (tool_exists("llvm-symbolizer")) {
    std::vector<uint64_t> addresses;
    for (const SymbolizedAddress& ours : results) addresses.push_back(ours.offset);
    const std::vector<std::vector<OracleFrame>> oracle = llvm_symbolizer_frames(path, addresses);
    EXPECT_EQ(oracle.size(), addresses.size()) << "llvm-symbolizer output not understood";
    for (size_t i = 0; i < oracle.size() && i < results.size(); ++i) {
      const bool by_oracle = !oracle[i].empty() && !oracle[i].back().function.empty();
      const bool by_ours = is_named(results[i]);
      sweep.oracle_named += by_oracle;
      sweep.only_oracle_named += by_oracle && !by_ours;
      sweep.only_ours_named += by_ours && !by_oracle;
      if (by_oracle != by_ours && sweep.only_oracle_named + sweep.only_ours_named <= 5) {
        sweep.first_differences +=
            fmt::format("0x{:x}: ours {}, llvm {}\n", results[i].offset, results[i].label(),
                        by_oracle ? oracle[i].back().function : std::string("??"));
      }
    }
  }
  std::cout << path << ": " << sweep.addresses << " addresses in " << seconds * 1000
            << " ms = " << double(sweep.addresses) / seconds << " addresses/s; " << sweep.named
            << " named (llvm-symbolizer: " << sweep.oracle_named << "), " << sweep.covered
            << " inside nm's functions\n"
            << sweep.first_differences;
  return sweep;
}

// Thousands of addresses over a whole module (on the reference machine: ~16k-90k addresses/s in
// this binary, ~43k in libc, ~2M in stripped git). Every address inside one of nm's function
// symbols gets a function name; `minimum_covered` keeps that from holding over a handful. Where
// llvm-symbolizer is installed, every address it names ours names too.
void expect_every_covered_address_named(const TextSweep& sweep, size_t minimum_covered) {
  EXPECT_GE(sweep.covered, minimum_covered);
  EXPECT_EQ(sweep.named_covered, sweep.covered) << "first unnamed: " << sweep.first_unnamed;
  EXPECT_EQ(sweep.only_oracle_named, 0u) << sweep.first_differences;
}

// Ours and llvm-symbolizer name exactly the same addresses (when it is installed).
void expect_same_addresses_named_as_llvm(const TextSweep& sweep) {
  if (!tool_exists("llvm-symbolizer")) return;
  EXPECT_EQ(sweep.named, sweep.oracle_named) << sweep.first_differences;
  EXPECT_EQ(sweep.only_ours_named, 0u) << sweep.first_differences;
}

TEST(SymbolizerScale, ThousandsOfAddressesInOwnExecutable) {
  const TextSweep sweep = sweep_text(own_executable(), 5000, false);
  // Built with full debug info and a symbol table: nm covers nearly all of .text, and whatever
  // ours names beyond nm's functions (code DWARF describes but no symbol sizes) is a sliver.
  expect_every_covered_address_named(sweep, sweep.addresses * 9 / 10);
  EXPECT_LE(sweep.named - sweep.named_covered, sweep.addresses / 100);
  expect_same_addresses_named_as_llvm(sweep);
}

// The exported functions (.dynsym) are a part of libc's code, but a sizeable one. Ours names more
// than llvm-symbolizer here: code without DWARF (libgcc's soft-float, __addtf3) by the separate
// debug file's symbol table, which llvm-symbolizer does not read for names.
TEST(SymbolizerScale, LibcWithSeparateDebuginfo) {
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  if (!file_exists(libc)) GTEST_SKIP() << libc << " not found";
  expect_every_covered_address_named(sweep_text(libc, 5000, true), 1000);
}

// A stripped binary has nothing but .dynsym (Debian's git: one function, `error`): ours names
// exactly the addresses nm -D covers, each by nm's name, and no other — no "nearest symbol" guess
// for the rest of .text. The sweep rarely lands in so few functions, so each is probed too.
TEST(SymbolizerScale, StrippedSystemBinaryNamesWhatItsDynamicSymbolsCover) {
  const std::string git = "/usr/bin/git";
  if (!file_exists(git)) GTEST_SKIP() << git << " not installed";
  const TextSweep sweep = sweep_text(git, 5000, true);
  expect_every_covered_address_named(sweep, 0);
  EXPECT_EQ(sweep.named, sweep.covered);
  EXPECT_EQ(sweep.symbol_mismatch, 0u);
  expect_same_addresses_named_as_llvm(sweep);
  const std::vector<FunctionSymbol> exported = function_symbols(git, true);
  ASSERT_FALSE(exported.empty()) << "nm -D finds no function in " << git;
  Symbolizer symbolizer;
  for (const FunctionSymbol& function : exported) {
    const SymbolizedAddress ours =
        symbolizer.symbolize({git, ""}, function.start + function.size / 2);
    EXPECT_EQ(ours.symbol, function.name);
    EXPECT_EQ(ours.symbol_offset, function.size / 2);
  }
}

}  // namespace
}  // namespace lockscope
