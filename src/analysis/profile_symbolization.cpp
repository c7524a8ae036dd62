#include "analysis/profile_symbolization.h"

#include <fmt/core.h>

#include "analysis/symbolizer.h"

namespace lockscope {
namespace {

void symbolize(CodeLocation& where, const ProcessProfile& process, Symbolizer& symbolizer) {
  if (where.module == format::kNoModule || where.module >= process.modules.size()) {
    where.label = fmt::format("0x{:x} (no module)", where.offset);
    return;
  }
  const ModuleSummary& module = process.modules[where.module];
  // Call sites are return addresses: look up the call instruction, one byte before.
  const uint64_t address = where.offset > 0 ? where.offset - 1 : 0;
  const SymbolizedAddress result =
      symbolizer.symbolize(ModuleIdentity{module.path, module.build_id_hex}, address);
  where.label = result.label();
  if (!result.frames.empty()) {
    const SourceFrame& innermost = result.frames.front();
    where.function = innermost.function;
    where.file = innermost.file;
    where.line = innermost.line;
    for (size_t i = 1; i < result.frames.size(); ++i) {
      const SourceFrame& outer = result.frames[i];
      where.inlined_from.push_back(
          outer.line ? fmt::format("{} {}:{}", outer.function, outer.file, outer.line)
                     : outer.function);
    }
  }
}

}  // namespace

void symbolize_profile(Profile& profile) {
  Symbolizer symbolizer;
  for (ProcessProfile& process : profile.processes) {
    for (LockSummary& lock : process.locks) {
      if (lock.init_site.known()) symbolize(lock.init_site, process, symbolizer);
      for (SiteSummary& site : lock.sites) symbolize(site.location, process, symbolizer);
    }
  }
}

}  // namespace lockscope
