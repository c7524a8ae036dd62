#include "analysis/lock_names.h"

#include <fmt/core.h>

#include <map>

#include "analysis/lock_kinds.h"
#include "analysis/symbolizer.h"

namespace lockscope {
namespace {

// The module whose mapped segments hold `address`, or nullptr (heap, stack, anonymous maps).
const ModuleSummary* module_holding(const ProcessProfile& process, uint64_t address) {
  for (const ModuleSummary& module : process.modules)
    if (module.start <= address && address < module.end) return &module;
  return nullptr;
}

std::optional<std::string> symbol_name(const ProcessProfile& process, const LockSummary& lock,
                                       Symbolizer& symbolizer) {
  const ModuleSummary* module = module_holding(process, lock.address);
  if (module == nullptr || lock.address < module->load_bias) return std::nullopt;
  std::optional<DataSymbol> symbol = symbolizer.data_symbol(
      ModuleIdentity{module->path, module->build_id_hex}, lock.address - module->load_bias);
  if (!symbol || symbol->name.empty()) return std::nullopt;
  return symbol->offset == 0 ? symbol->name : fmt::format("{}+{:#x}", symbol->name, symbol->offset);
}

// The acquire (or wait) site with the most calls: what names a lock whose first use is not known.
const SiteSummary* busiest_site(const LockSummary& lock) {
  const SiteSummary* busiest = nullptr;
  for (const SiteSummary& site : lock.sites) {
    const format::OperationClass kind = format::operation_class(site.operation);
    if (kind != format::OperationClass::kAcquire && kind != format::OperationClass::kWait) continue;
    if (!site.location.known()) continue;
    if (busiest == nullptr || site.count > busiest->count) busiest = &site;
  }
  return busiest;
}

void name_lock(const ProcessProfile& process, LockSummary& lock, Symbolizer& symbolizer) {
  if (std::optional<std::string> symbol = symbol_name(process, lock, symbolizer)) {
    lock.name = *symbol;
    lock.name_source = LockNameSource::kSymbol;
  } else if (lock.init_site.known()) {
    lock.name = lock.init_site.label;
    lock.name_source = LockNameSource::kInitSite;
  } else if (lock.first_use_site.known()) {
    lock.name = lock.first_use_site.label;
    lock.name_source = LockNameSource::kFirstUse;
  } else if (const SiteSummary* site = busiest_site(lock)) {
    lock.name = site->location.label;
    lock.name_source = LockNameSource::kBusiestSite;
  } else {
    lock.name = fmt::format("{:#x}", lock.address);
    lock.name_source = LockNameSource::kAddress;
  }
  // A label of a site without a module is never empty either, but say so rather than print "".
  if (lock.name.empty()) {
    lock.name = fmt::format("{:#x}", lock.address);
    lock.name_source = LockNameSource::kAddress;
  }
}

}  // namespace

void name_locks(Profile& profile, Symbolizer& symbolizer) {
  for (ProcessProfile& process : profile.processes) {
    std::map<std::string, uint32_t> uses;
    for (LockSummary& lock : process.locks) {
      name_lock(process, lock, symbolizer);
      ++uses[lock.name];
    }
    for (LockSummary& lock : process.locks) lock.same_name_locks = uses[lock.name];
  }
}

std::string lock_name(const LockSummary& lock) {
  return lock.name.empty() ? fmt::format("{:#x}", lock.address) : lock.name;
}

std::string lock_name_phrase(const LockSummary& lock) {
  if (lock.name.empty())
    return fmt::format("{} at {:#x}", primitive_name(lock.primitive), lock.address);
  const std::string what = primitive_name(lock.primitive);
  switch (lock.name_source) {
    case LockNameSource::kSymbol:
      return fmt::format("{} {}", what, lock.name);
    case LockNameSource::kInitSite:
      return fmt::format("{} initialised at {}", what, lock.name);
    case LockNameSource::kFirstUse:
      return fmt::format("{} first {} at {}", what,
                         is_lock_primitive(lock.primitive) ? "taken" : "waited on", lock.name);
    case LockNameSource::kBusiestSite:
      return fmt::format("{} {} at {}", what, is_lock_primitive(lock.primitive) ? "taken" : "used",
                         lock.name);
    case LockNameSource::kAddress:
      return fmt::format("{} at {}", what, lock.name);
  }
  return lock.name;
}

}  // namespace lockscope
