// Writes a profile as large as a big server's, for timing `lockscope report` (report_time.sh):
// SITES call sites over SITES/4 mutexes (each lock with two acquire and two release sites), every
// acquire site contended, with wait and hold histograms. The call sites are real code addresses of
// MODULE (a few inside each function of its symbol table, so each needs its own DWARF lookup), so
// symbolization does the work it does on a real program's profile.
//
// usage: lockscope_large_profile OUT_DIR MODULE SITES
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/log_histogram.h"
#include "profile_file_builder.h"

namespace {

using namespace lockscope;
using namespace lockscope::format;

// Addresses inside the module's functions (ELF vaddrs): up to `per_function` each, 8 bytes apart.
std::vector<uint64_t> code_addresses(const std::string& module, size_t per_function) {
  std::vector<uint64_t> addresses;
  elf_version(EV_CURRENT);
  const int fd = open(module.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return addresses;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  for (Elf_Scn* section = nullptr; elf && (section = elf_nextscn(elf, section));) {
    GElf_Shdr header;
    if (!gelf_getshdr(section, &header) || header.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(section, nullptr);
    for (size_t i = 0; data && i < header.sh_size / header.sh_entsize; ++i) {
      GElf_Sym symbol;
      if (!gelf_getsym(data, static_cast<int>(i), &symbol)) continue;
      if (GELF_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_size < 8 || !symbol.st_value)
        continue;
      for (uint64_t at = 4; at < symbol.st_size && at / 8 < per_function; at += 8)
        addresses.push_back(symbol.st_value + at);
    }
  }
  if (elf) elf_end(elf);
  close(fd);
  return addresses;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s OUT_DIR MODULE SITES\n", argv[0]);
    return 2;
  }
  const std::string directory = argv[1], module = std::filesystem::canonical(argv[2]).string();
  const size_t sites = std::strtoul(argv[3], nullptr, 10);
  std::vector<uint64_t> addresses;
  for (size_t per_function = 1; addresses.size() < sites && per_function <= 64; per_function *= 2)
    addresses = code_addresses(module, per_function);
  if (addresses.size() < sites) {
    std::fprintf(stderr, "%s: %zu code addresses in %s, fewer than %zu sites\n", argv[0],
                 addresses.size(), module.c_str(), sites);
    return 1;
  }
  ProfileFileBuilder b;
  ProcessRecord p{};
  p.pid = 4242;
  p.ppid = 1;
  p.duration_ns = 10'000'000'000;
  p.ticks_per_second = 1e9;
  p.clock_source = static_cast<uint32_t>(ClockSource::kMonotonic);
  p.hold_sample_period = 1;
  p.exit_path = static_cast<uint32_t>(ExitPath::kExit);
  p.exit_status = 0;
  p.executable = b.add_string(module);
  p.command_line = b.add_string(module);
  b.process.push_back(p);
  ModuleRecord m{};
  m.load_bias = 0x555500000000;
  m.start = m.load_bias;
  m.end = m.load_bias + (uint64_t{1} << 32);
  m.path = b.add_string(module);
  b.modules.push_back(m);
  ThreadRecord t{};
  t.tid = 4242;
  std::strcpy(t.name, "server");
  const auto bucket = [](uint64_t ns) { return LogHistogramLayout::bucket_of(ns); };
  for (size_t s = 0; s < sites; ++s) {
    const size_t lock = s / 4;
    if (s % 4 == 0) {
      LockRecord l{};
      l.address = 0x7f0000000000 + lock * 64;
      l.primitive = static_cast<uint32_t>(Primitive::kMutex);
      l.owner_changes = 10 + lock % 100;
      b.locks.push_back(l);
    }
    SiteRecord site{};
    site.lock_index = static_cast<uint32_t>(lock);
    site.module = 0;
    site.offset = addresses[s * (addresses.size() / sites)];
    site.count = 1000 + s % 977;
    if (s % 2 == 0) {  // an acquire site, contended
      site.operation = static_cast<uint16_t>(Operation::kLock);
      site.contended = 10 + s % 90;
      site.wait_sum_ns = site.contended * (2000 + s % 5000);
      site.wait_max_ns = 50'000 + s % 100'000;
      site.wait_histogram = b.add_histogram(
          {{bucket(900), site.contended / 2},
           {bucket(9'000), site.contended / 4},
           {bucket(site.wait_max_ns), site.contended - site.contended / 2 - site.contended / 4}});
      site.hold_sum_ns = site.count * 300;
      site.hold_max_ns = 20'000;
      site.hold_samples = site.count;
      site.hold_histogram = b.add_histogram({{bucket(250), site.count - 1}, {bucket(20'000), 1}});
      t.acquisitions += site.count;
    } else {
      site.operation = static_cast<uint16_t>(Operation::kUnlock);
    }
    b.sites.push_back(site);
  }
  t.releases = t.acquisitions;
  b.threads.push_back(t);
  std::filesystem::create_directories(directory);
  std::ofstream(directory + "/4242-1.lsprof", std::ios::binary) << b.bytes();
  std::printf("%zu sites over %zu locks at code addresses of %s\n", sites, b.locks.size(),
              module.c_str());
  return 0;
}
