// The preload runtime links nothing but libc (docs/runtime.md): every library it needs is loaded
// into every profiled process, before the program's own code, and each costs that process its
// loading and relocation (libm's ifunc resolvers alone were ~0.5 ms of CPU a process, paid once
// by each of the processes a `git repack` or a build starts).
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

// The DT_NEEDED entries of a 64-bit ELF shared object, in order; an error message instead when it
// cannot be read as one.
std::vector<std::string> needed_libraries(const std::string& path, std::string& error) {
  std::ifstream file(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(file), {}};
  Elf64_Ehdr header{};
  if (bytes.size() < sizeof header)
    return error = path + ": not an ELF file", std::vector<std::string>{};
  std::memcpy(&header, bytes.data(), sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_shoff + size_t{header.e_shnum} * sizeof(Elf64_Shdr) > bytes.size())
    return error = path + ": not a 64-bit ELF file", std::vector<std::string>{};
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  std::memcpy(sections.data(), bytes.data() + header.e_shoff, sections.size() * sizeof(Elf64_Shdr));
  std::vector<std::string> needed;
  for (const Elf64_Shdr& section : sections) {
    if (section.sh_type != SHT_DYNAMIC || section.sh_link >= sections.size()) continue;
    const Elf64_Shdr& strings = sections[section.sh_link];
    for (size_t at = section.sh_offset;
         at + sizeof(Elf64_Dyn) <= section.sh_offset + section.sh_size; at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn entry{};
      std::memcpy(&entry, bytes.data() + at, sizeof entry);
      if (entry.d_tag == DT_NULL) break;
      if (entry.d_tag == DT_NEEDED && entry.d_un.d_val < strings.sh_size)
        needed.emplace_back(bytes.c_str() + strings.sh_offset + entry.d_un.d_val);
    }
  }
  return needed;
}

TEST(RuntimeLinkage, TheRuntimeNeedsNoLibraryButLibc) {
  const std::string runtime =
      (std::filesystem::path(LOCKSCOPE_CLI).parent_path().parent_path() / "lib" / "liblockscope.so")
          .string();
  std::string error;
  const std::vector<std::string> needed = needed_libraries(runtime, error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_EQ(needed, std::vector<std::string>{"libc.so.6"});
}

}  // namespace
}  // namespace lockscope::testing
