// Symbolizer tests. The oracle is llvm-symbolizer on fixture binaries built with known flags
// (tests/unit/symbolizer_fixture/), plus real system binaries where they are installed.
#include "analysis/symbolizer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "symbolizer_fixture/llvm_symbolizer_oracle.h"

namespace lockscope {
namespace {

using namespace symbolizer_oracle;

#define SKIP_WITHOUT_LLVM_SYMBOLIZER() \
  if (!tool_exists("llvm-symbolizer")) \
  GTEST_SKIP() << "llvm-symbolizer (the oracle) is not installed"

// A few addresses inside each function: first byte, middle, last byte.
std::vector<uint64_t> addresses_inside(const std::vector<FunctionSymbol>& functions) {
  std::vector<uint64_t> addresses;
  for (const FunctionSymbol& function : functions) {
    addresses.push_back(function.start);
    addresses.push_back(function.start + function.size / 2);
    addresses.push_back(function.start + function.size - 1);
  }
  return addresses;
}

// "" when ours agrees with the oracle on every frame's function, file base name and line.
// GCC's clone suffixes as __cxa_demangle prints them ("f() [clone .cold]") and as LLVM's demangler
// does ("f() (.cold)"): both say the same, so compare without them.
std::string without_clone_suffix(std::string name) {
  for (size_t clone; (clone = name.find(" [clone ")) != std::string::npos;) {
    name.erase(clone, name.find(']', clone) + 1 - clone);
  }
  if (name.size() > 4 && name.back() == ')' && name.rfind(" (.") != std::string::npos) {
    name.erase(name.rfind(" (."));
  }
  return name;
}

// The same name as GNU's and LLVM's demanglers spell it differently: "{lambda(int)#1}" vs
// "'lambda'(int)", "decltype (::new" vs "decltype(new", "operator<< <" vs "operator<<<".
std::string demangler_neutral(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name.compare(i, 8, "{lambda(") == 0 || name.compare(i, 9, "'lambda'(") == 0) {
      out += "lambda(";
      i += name[i] == '{' ? 7 : 8;
      continue;
    }
    if (name[i] == '#') {  // "#1}" after a lambda's parameters
      while (i + 1 < name.size() && name[i + 1] != '}') ++i;
      ++i;
      continue;
    }
    if (name[i] == ' ') continue;
    if (name.compare(i, 2, "::") == 0 && !out.empty() && out.back() == '(') {
      ++i;
      continue;
    }
    out += name[i];
  }
  return out;
}

// `compare_names` false: locations and chain length only, for C code where llvm-symbolizer names
// the outermost frame after whichever ELF alias it picks (_Exit for _exit).
std::string disagreement(const SymbolizedAddress& ours, const std::vector<OracleFrame>& oracle,
                         bool compare_names = true) {
  std::ostringstream out;
  bool same = ours.frames.size() == oracle.size();
  for (size_t i = 0; same && i < oracle.size(); ++i) {
    const SourceFrame& frame = ours.frames[i];
    same = (!compare_names || demangler_neutral(without_clone_suffix(frame.function)) ==
                                  demangler_neutral(without_clone_suffix(oracle[i].function))) &&
           base_name(frame.file) == oracle[i].file && frame.line == oracle[i].line;
  }
  if (same) return {};
  out << std::hex << "0x" << ours.offset << std::dec << "\n  ours:";
  for (const SourceFrame& frame : ours.frames) {
    out << " [" << frame.function << " " << base_name(frame.file) << ":" << frame.line << "]";
  }
  out << "\n  llvm:";
  for (const OracleFrame& frame : oracle) {
    out << " [" << frame.function << " " << frame.file << ":" << frame.line << "]";
  }
  return out.str();
}

struct Agreement {
  size_t compared = 0;
  size_t disagreed = 0;
  std::string first_disagreements;
};

// Compares every address the oracle has a source line for.
Agreement compare_with_llvm_symbolizer(const std::string& path,
                                       const std::vector<uint64_t>& addresses,
                                       bool compare_names = true) {
  std::vector<std::vector<OracleFrame>> oracle = llvm_symbolizer_frames(path, addresses);
  EXPECT_EQ(oracle.size(), addresses.size()) << "llvm-symbolizer output not understood";
  Symbolizer symbolizer;
  Agreement agreement;
  for (size_t i = 0; i < oracle.size() && i < addresses.size(); ++i) {
    if (oracle[i].empty()) continue;
    SymbolizedAddress ours = symbolizer.symbolize({path, ""}, addresses[i]);
    if (oracle[i].front().line == 0) {
      // Code outside every unit's ranges (crt's _start after main) has no source line: the line
      // table's last row before it belongs to another function.
      ++agreement.compared;
      if (!ours.frames.empty() && ours.frames.front().line != 0 && agreement.disagreed++ < 8) {
        agreement.first_disagreements +=
            fmt::format("0x{:x}: llvm gives no line, ours {}:{}\n", addresses[i],
                        ours.frames.front().file, ours.frames.front().line);
      }
      continue;
    }
    ++agreement.compared;
    std::string difference = disagreement(ours, oracle[i], compare_names);
    if (!difference.empty() && agreement.disagreed++ < 8) {
      agreement.first_disagreements += difference + "\n";
    }
  }
  return agreement;
}

void expect_full_agreement(const std::string& path, size_t minimum_compared) {
  std::vector<FunctionSymbol> functions = function_symbols(path);
  ASSERT_FALSE(functions.empty()) << "nm found no functions in " << path;
  Agreement agreement = compare_with_llvm_symbolizer(path, addresses_inside(functions));
  EXPECT_GE(agreement.compared, minimum_compared) << path;
  EXPECT_EQ(agreement.disagreed, 0u) << agreement.first_disagreements;
}

TEST(SymbolizerOracle, PieAtO0MatchesLlvmSymbolizer) {
  SKIP_WITHOUT_LLVM_SYMBOLIZER();
  expect_full_agreement(SYMBOLIZER_FIXTURE_O0, 6 * 3);
}

TEST(SymbolizerOracle, NonPieAtO0MatchesLlvmSymbolizer) {
  SKIP_WITHOUT_LLVM_SYMBOLIZER();
  expect_full_agreement(SYMBOLIZER_FIXTURE_O0_NOPIE, 6 * 3);
}

TEST(SymbolizerOracle, SharedLibraryMatchesLlvmSymbolizer) {
  SKIP_WITHOUT_LLVM_SYMBOLIZER();
  expect_full_agreement(SYMBOLIZER_FIXTURE_LIBRARY, 2 * 3);
}

class SymbolizerInlineChain : public testing::TestWithParam<const char*> {};

// Every byte of outer_entry() against the oracle, and at least one address whose chain is the
// full innermost_step -> middle_step -> outer_entry with call-site lines.
TEST_P(SymbolizerInlineChain, EveryByteOfOuterFunctionMatchesLlvmSymbolizer) {
  SKIP_WITHOUT_LLVM_SYMBOLIZER();
  const std::string path = GetParam();
  std::vector<uint64_t> addresses;
  for (const FunctionSymbol& function : function_symbols(path)) {
    if (function.name.find("outer_entry") == std::string::npos) continue;
    for (uint64_t offset = 0; offset < function.size; ++offset)
      addresses.push_back(function.start + offset);
  }
  ASSERT_FALSE(addresses.empty()) << "outer_entry not found in " << path;
  Agreement agreement = compare_with_llvm_symbolizer(path, addresses);
  EXPECT_EQ(agreement.compared, addresses.size());
  EXPECT_EQ(agreement.disagreed, 0u) << agreement.first_disagreements;

  Symbolizer symbolizer;
  bool found_full_chain = false;
  for (uint64_t address : addresses) {
    SymbolizedAddress result = symbolizer.symbolize({path, ""}, address);
    if (result.frames.size() != 3) continue;
    found_full_chain = true;
    // Static functions have no DW_AT_linkage_name, and inlined frames have no ELF symbol to take
    // the parameter list from (llvm-symbolizer prints the same).
    EXPECT_EQ(result.frames[0].function, "innermost_step");
    EXPECT_EQ(result.frames[1].function, "middle_step");
    EXPECT_EQ(result.frames[2].function, "outer_entry(int)");
    EXPECT_EQ(base_name(result.frames[1].file), "inlined_functions.cpp");
    EXPECT_GT(result.frames[1].line, 0);  // the call of innermost_step inside middle_step
    EXPECT_GT(result.frames[2].line, 0);
    EXPECT_NE(result.label().find("(inlined into outer_entry(int))"), std::string::npos)
        << result.label();
  }
  EXPECT_TRUE(found_full_chain) << "no address with a three-level inline chain";
}

INSTANTIATE_TEST_SUITE_P(SymbolizerDwarfVersions, SymbolizerInlineChain,
                         testing::Values(SYMBOLIZER_FIXTURE_O2_INLINE,
                                         SYMBOLIZER_FIXTURE_O2_INLINE_DWARF4));

// clang does not emit .debug_aranges; libdw 0.188 then finds no CU by address on its own.
TEST(SymbolizerOracle, WithoutDebugArangesStillMatches) {
  SKIP_WITHOUT_LLVM_SYMBOLIZER();
  ScratchDirectory scratch;
  const std::string copy = scratch.path() + "/no_aranges";
  run_command("objcopy --remove-section=.debug_aranges '" +
              std::string(SYMBOLIZER_FIXTURE_O2_INLINE) + "' '" + copy + "'");
  ASSERT_TRUE(file_exists(copy));
  ASSERT_EQ(run_command("readelf -S '" + copy + "' | grep -c debug_aranges"), "0\n");
  expect_full_agreement(copy, 2 * 3);
}

TEST(SymbolizerFallback, StrippedDebugInfoUsesSymbolTable) {
  ScratchDirectory scratch;
  const std::string copy = scratch.path() + "/stripped_debug";
  run_command("objcopy --strip-debug '" + std::string(SYMBOLIZER_FIXTURE_O0) + "' '" + copy + "'");
  ASSERT_TRUE(file_exists(copy));
  Symbolizer symbolizer;
  size_t checked = 0;
  for (const FunctionSymbol& function : function_symbols(copy)) {
    if (function.name.rfind("fixture::scaled", 0) != 0) continue;
    SymbolizedAddress result = symbolizer.symbolize({copy, ""}, function.start + 4);
    EXPECT_FALSE(result.has_debug_info);
    EXPECT_EQ(result.symbol, "fixture::scaled(int, int)");
    EXPECT_EQ(result.symbol_offset, 4u);
    EXPECT_EQ(result.label(), "fixture::scaled(int, int)+0x4 (stripped_debug)");
    ++checked;
  }
  EXPECT_EQ(checked, 1u);
}

TEST(SymbolizerFallback, StrippedAllGivesSymbolOrModuleOffsetNeverBlank) {
  ScratchDirectory scratch;
  for (const char* original : {SYMBOLIZER_FIXTURE_O0, SYMBOLIZER_FIXTURE_LIBRARY}) {
    const std::vector<FunctionSymbol> functions = function_symbols(original);
    const std::string copy = scratch.path() + "/" + base_name(original);
    run_command("objcopy --strip-all '" + std::string(original) + "' '" + copy + "'");
    ASSERT_TRUE(file_exists(copy));
    Symbolizer symbolizer;
    for (uint64_t address : addresses_inside(functions)) {
      SymbolizedAddress result = symbolizer.symbolize({copy, ""}, address);
      EXPECT_FALSE(result.has_debug_info);
      const std::string label = result.label();
      const bool symbol_label = !result.symbol.empty() && label.find("+0x") != std::string::npos &&
                                label.find("(" + base_name(copy) + ")") != std::string::npos;
      const bool module_label = label.rfind(base_name(copy) + "+0x", 0) == 0;
      EXPECT_TRUE(symbol_label || module_label) << label;
    }
    // The library exports exported_entry in .dynsym, which survives --strip-all.
    if (std::string(original) == SYMBOLIZER_FIXTURE_LIBRARY) {
      for (const FunctionSymbol& function : functions) {
        if (function.name != "exported_entry") continue;
        EXPECT_EQ(symbolizer.symbolize({copy, ""}, function.start + 1).symbol, "exported_entry");
      }
    }
  }
}

TEST(SymbolizerFallback, MissingFileGivesModuleOffset) {
  Symbolizer symbolizer;
  SymbolizedAddress result = symbolizer.symbolize({"/nonexistent/dir/libgone.so", ""}, 0x1234);
  EXPECT_FALSE(result.has_debug_info);
  EXPECT_FALSE(result.untrusted_reason.empty());
  EXPECT_EQ(result.label().rfind("libgone.so+0x1234", 0), 0u) << result.label();
  // A directory and a non-ELF file are unreadable the same way.
  EXPECT_EQ(symbolizer.symbolize({"/tmp", ""}, 0x10).label().rfind("tmp+0x10", 0), 0u);
  EXPECT_EQ(symbolizer.symbolize({"/etc/hostname", ""}, 0x10).label().rfind("hostname+0x10", 0),
            0u);
  EXPECT_EQ(symbolizer.symbolize({"", ""}, 0x10).label().empty(), false);
}

// A profile's module path may name anything: a FIFO (libdwfl's own open() of it waited for a
// writer for ever), a device. Only a regular file is opened as an ELF file.
TEST(SymbolizerFallback, ANonRegularFileIsNeverOpenedAsElf) {
  const std::string fifo = std::filesystem::temp_directory_path().string() + "/lockscope-fifo-" +
                           std::to_string(getpid());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto answer = std::async(std::launch::async, [&fifo] {
    Symbolizer symbolizer;
    return symbolizer.symbolize({fifo, ""}, 0x10);
  });
  if (answer.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "the symbolizer still waits for the FIFO after 10 s";
    const int unblock = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // lets its open() return
    if (unblock >= 0) close(unblock);
  }
  const SymbolizedAddress result = answer.get();
  unlink(fifo.c_str());
  EXPECT_EQ(result.untrusted_reason, "not a regular file (a FIFO)");
  EXPECT_EQ(result.label().rfind("lockscope-fifo-", 0), 0u) << result.label();
  Symbolizer symbolizer;
  EXPECT_EQ(symbolizer.symbolize({"/dev/zero", ""}, 0x10).untrusted_reason,
            "not a regular file (a character device)");
}

TEST(SymbolizerFallback, BuildIdMismatchIsNotTrusted) {
  const std::string path = SYMBOLIZER_FIXTURE_O0;
  const std::string build_id = build_id_of(path);
  ASSERT_EQ(build_id.size(), 40u) << "fixture linked without --build-id=sha1";
  uint64_t address = 0;
  for (const FunctionSymbol& function : function_symbols(path)) {
    if (function.name == "main") address = function.start + 2;
  }
  ASSERT_NE(address, 0u);

  Symbolizer symbolizer;
  SymbolizedAddress matching = symbolizer.symbolize({path, build_id}, address);
  EXPECT_TRUE(matching.has_debug_info);
  EXPECT_EQ(matching.frames.at(0).function, "main");
  std::string upper_case = build_id;
  for (char& c : upper_case) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_TRUE(symbolizer.symbolize({path, upper_case}, address).has_debug_info);

  std::string other = build_id;
  other[0] = other[0] == '0' ? '1' : '0';
  SymbolizedAddress mismatching = symbolizer.symbolize({path, other}, address);
  EXPECT_FALSE(mismatching.has_debug_info);
  EXPECT_TRUE(mismatching.symbol.empty());
  EXPECT_EQ(mismatching.untrusted_reason, "build-id mismatch");
  EXPECT_NE(mismatching.label().find("+0x"), std::string::npos);
  EXPECT_NE(mismatching.label().find("build-id mismatch"), std::string::npos)
      << mismatching.label();
}

TEST(SymbolizerCache, RepeatedAddressGivesSameAnswer) {
  Symbolizer symbolizer;
  const ModuleIdentity module{SYMBOLIZER_FIXTURE_O2_INLINE, ""};
  for (const FunctionSymbol& function : function_symbols(module.path)) {
    std::string first = symbolizer.symbolize(module, function.start).label();
    EXPECT_FALSE(first.empty());
    EXPECT_EQ(symbolizer.symbolize(module, function.start).label(), first);
  }
}

}  // namespace
}  // namespace lockscope

namespace lockscope {
namespace {

// Real binaries: agreement over a sample of every function, with the first disagreements shown.
// Locations (frames, files, lines) must agree; names may differ in demangler formatting
// ("decltype (::new" vs "decltype(new"), and for C code llvm-symbolizer names the outermost frame
// after whichever ELF alias it picks (_Exit for _exit).
void expect_agreement(const std::string& path, bool dynamic_symbols, double minimum_location_ratio,
                      double minimum_name_ratio) {
  std::vector<FunctionSymbol> functions = function_symbols(path, dynamic_symbols);
  if (functions.size() > 400) {  // an even sample keeps llvm-symbolizer's share of the time small
    std::vector<FunctionSymbol> sample;
    for (size_t i = 0; i < functions.size(); i += functions.size() / 400)
      sample.push_back(functions[i]);
    functions.swap(sample);
  }
  for (bool compare_names : {false, true}) {
    Agreement agreement =
        compare_with_llvm_symbolizer(path, addresses_inside(functions), compare_names);
    std::cout << path << ": " << agreement.compared - agreement.disagreed << "/"
              << agreement.compared << (compare_names ? " names" : " locations")
              << " agree with llvm-symbolizer\n";
    ASSERT_GT(agreement.compared, 0u);
    EXPECT_GE(1.0 - double(agreement.disagreed) / double(agreement.compared),
              compare_names ? minimum_name_ratio : minimum_location_ratio)
        << agreement.first_disagreements;
  }
}

TEST(SymbolizerRealBinary, OwnExecutableAgreesWithLlvmSymbolizer) {
  SKIP_WITHOUT_LLVM_SYMBOLIZER();
  // This binary changes with every test added; a few inline-range ties resolve differently. Names:
  // GNU's demangler (ours, abi::__cxa_demangle) and LLVM's spell lambdas inside template arguments
  // differently ("appender fmt::...::write_padded<...>" vs "decimal_fp<float> ..."); fmt and
  // nlohmann templates make up much of this binary, more so under sanitizers.
  expect_agreement(own_executable(), false, 0.99, 0.7);
}

// The demo's main ends with a line-table row at its last address (the closing brace, after the
// cold part's split), so the row "continued" into crt's _start, which follows main and has no
// debug info: the wait stacks of the demo's child ended in " kvcache_demo.cpp:152", with no name.
TEST(SymbolizerRealBinary, CodeOutsideEveryUnitHasNoSourceLine) {
  const std::string demo = LOCKSCOPE_BINARY_DIR "/bin/lockscope_demo";
  if (!file_exists(demo)) GTEST_SKIP() << demo << " not built";
  std::vector<FunctionSymbol> functions = function_symbols(demo);
  auto start = std::find_if(functions.begin(), functions.end(),
                            [](const FunctionSymbol& f) { return f.name == "_start"; });
  ASSERT_NE(start, functions.end());
  Symbolizer symbolizer;
  for (uint64_t address = start->start; address < start->start + start->size; ++address) {
    SymbolizedAddress ours = symbolizer.symbolize({demo, ""}, address);
    ASSERT_EQ(ours.frames.size(), 1u);
    EXPECT_EQ(ours.frames.front().line, 0) << std::hex << address << " " << ours.label();
    EXPECT_EQ(ours.label().rfind("_start", 0), 0u) << ours.label();
  }
  SKIP_WITHOUT_LLVM_SYMBOLIZER();
  expect_agreement(demo, false, 1.0, 0.9);  // names: lambdas are spelled differently
}

TEST(SymbolizerRealBinary, LibcAgreesWithLlvmSymbolizer) {
  SKIP_WITHOUT_LLVM_SYMBOLIZER();
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  if (!file_exists(libc)) GTEST_SKIP() << libc << " not found";
  Symbolizer symbolizer;
  if (!symbolizer.symbolize({libc, ""}, function_symbols(libc, true).at(0).start).has_debug_info) {
    GTEST_SKIP() << "no debug info for libc (Debian: apt install libc6-dbg)";
  }
  expect_agreement(libc, true, 0.99, 0.4);  // names: glibc aliases, see above
}

}  // namespace
}  // namespace lockscope
