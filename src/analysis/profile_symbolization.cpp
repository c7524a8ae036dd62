#include "analysis/profile_symbolization.h"

#include <fmt/core.h>

#include <filesystem>

#include "analysis/code_labels.h"
#include "analysis/lock_names.h"
#include "analysis/symbolizer.h"

namespace lockscope {
namespace {

std::string display_file(const std::string& file) {
  std::error_code error;
  const std::string cwd = std::filesystem::current_path(error).string() + "/";
  if (!error && file.rfind(cwd, 0) == 0) return file.substr(cwd.size());
  return file;
}

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
  // Report the innermost frame in the user's own code: the line that took the lock.
  size_t chosen = result.frames.size();
  for (size_t i = 0; i < result.frames.size(); ++i) {
    if (result.frames[i].line > 0 && !is_system_file(result.frames[i].file)) {
      chosen = i;
      break;
    }
  }
  if (chosen == result.frames.size()) {
    where.label = result.label();
    if (!result.frames.empty()) {
      // Code only of system headers (a header-only library's lock, all of it inlined): its
      // innermost line is still a file:line, as the label shows it, not a site without debug info.
      const SourceFrame& innermost = result.frames.front();
      where.function = innermost.function;
      if (innermost.line > 0) {
        where.file = innermost.file;
        where.line = innermost.line;
      }
    }
    return;
  }
  const SourceFrame& frame = result.frames[chosen];
  where.function = frame.function;
  where.file = frame.file;
  where.line = frame.line;
  where.label = fmt::format("{} {}:{}", short_function_name(frame.function),
                            display_file(frame.file), frame.line);
  for (size_t i = chosen + 1; i < result.frames.size(); ++i) {
    const SourceFrame& outer = result.frames[i];
    where.inlined_from.push_back(fmt::format("{} {}:{}", short_function_name(outer.function),
                                             display_file(outer.file), outer.line));
  }
}

}  // namespace

namespace {

// Visits every code location of `process` that symbolize_profile fills, in its order.
template <typename Visit>
void for_each_location(ProcessProfile& process, Visit&& visit) {
  for (LockSummary& lock : process.locks) {
    if (lock.init_site.known()) visit(lock.init_site);
    if (lock.first_use_site.known()) visit(lock.first_use_site);
    for (SiteSummary& site : lock.sites) {
      visit(site.location);
      for (Blame& blame : site.blame)
        if (blame.holder_site.known()) visit(blame.holder_site);
    }
  }
  for (auto& stack : process.stacks)
    for (CodeLocation& frame : stack) visit(frame);
  for (CodeLocation& site : process.trace.sites) visit(site);
  for (LockOrderEdge& edge : process.lock_order) {
    if (edge.from_site.known()) visit(edge.from_site);
    visit(edge.to_site);
  }
}

}  // namespace

void symbolize_profile(Profile& profile, const SymbolizeProgress& progress) {
  Symbolizer symbolizer;
  symbolize_profile(profile, symbolizer, progress);
}

void symbolize_profile(Profile& profile, Symbolizer& symbolizer,
                       const SymbolizeProgress& progress) {
  size_t total = 0;
  if (progress)
    for (ProcessProfile& process : profile.processes)
      for_each_location(process, [&](CodeLocation&) { ++total; });
  size_t done = 0;
  for (ProcessProfile& process : profile.processes)
    for_each_location(process, [&](CodeLocation& where) {
      symbolize(where, process, symbolizer);
      if (progress && ++done % 256 == 0 && done < total) progress(done, total);
    });
  name_locks(profile, symbolizer);
  if (progress) progress(total, total);
}

}  // namespace lockscope
