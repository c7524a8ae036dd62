#include "analysis/lock_names.h"

#include <fmt/core.h>
#include <pthread.h>
#include <semaphore.h>

#include <map>

#include "analysis/code_labels.h"
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

// The size of the primitive's object in this ABI (the profile's and the report's: x86-64 glibc),
// where a member path stops descending.
uint64_t object_size(format::Primitive primitive) {
  switch (primitive) {
    case format::Primitive::kMutex:
      return sizeof(pthread_mutex_t);
    case format::Primitive::kRwLock:
      return sizeof(pthread_rwlock_t);
    case format::Primitive::kCondVar:
      return sizeof(pthread_cond_t);
    case format::Primitive::kSpinLock:
      return sizeof(pthread_spinlock_t);
    case format::Primitive::kSemaphore:
      return sizeof(sem_t);
    case format::Primitive::kBarrier:
      return sizeof(pthread_barrier_t);
  }
  return 1;
}

std::optional<std::string> symbol_name(const ProcessProfile& process, const LockSummary& lock,
                                       Symbolizer& symbolizer) {
  const ModuleSummary* module = module_holding(process, lock.address);
  if (module == nullptr || lock.address < module->load_bias) return std::nullopt;
  std::optional<DataSymbol> symbol =
      symbolizer.data_symbol(ModuleIdentity{module->path, module->build_id_hex},
                             lock.address - module->load_bias, object_size(lock.primitive));
  if (!symbol || symbol->name.empty()) return std::nullopt;
  const std::string name = short_function_name(symbol->name);  // no "(anonymous namespace)::"
  if (!symbol->member.empty()) return name + symbol->member;
  if (symbol->offset == 0) return name;
  return fmt::format("{}+{:#x}", name, symbol->offset);
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

// The first frame of the program's own code on the stacks through the lock's sites: where a lock
// whose sites all lie in the standard library's code (std::mutex::lock out of line, as at -O0 and
// often at -O2: every std::mutex of the program would share one name) is taken from. The stacks
// its threads waited from first, weighted by their waits (where the lock matters); else the
// stacks of every acquisition (--stacks all); else those its holds were released from. nullptr
// when no stack was captured.
const CodeLocation* program_caller(const ProcessProfile& process, const LockSummary& lock) {
  auto first_own_frame = [&](size_t stack) -> const CodeLocation* {
    if (stack >= process.stacks.size()) return nullptr;
    for (const CodeLocation& frame : process.stacks[stack])
      if (frame.line > 0 && !frame.file.empty() && !is_system_file(frame.file)) return &frame;
    return nullptr;
  };
  for (int tier = 0; tier < 3; ++tier) {
    std::map<std::string, std::pair<uint64_t, const CodeLocation*>> callers;
    auto add = [&](size_t stack, uint64_t weight) {
      if (const CodeLocation* frame = first_own_frame(stack)) {
        auto& [total, where] = callers[frame->label];
        total += weight;
        where = frame;
      }
    };
    for (const SiteSummary& site : lock.sites) {
      if (tier == 0)
        for (const SiteStack& stack : site.stacks) add(stack.stack, stack.waits);
      if (tier == 1)
        for (const SiteStack& stack : site.acquire_stacks) add(stack.stack, stack.waits);
      if (tier == 2)
        for (const HoldStack& stack : site.hold_stacks) add(stack.stack, stack.holds);
    }
    const CodeLocation* best = nullptr;
    uint64_t most = 0;
    for (const auto& [label, caller] : callers)  // ties: the first label, so the same every run
      if (best == nullptr || caller.first > most) {
        best = caller.second;
        most = caller.first;
      }
    if (best != nullptr) return best;
  }
  return nullptr;
}

bool in_system_code(const CodeLocation& where) {
  return !where.file.empty() && is_system_file(where.file);
}

void name_lock(const ProcessProfile& process, LockSummary& lock, Symbolizer& symbolizer) {
  const CodeLocation* site = nullptr;  // the call site it is named after, if any
  if (std::optional<std::string> symbol = symbol_name(process, lock, symbolizer)) {
    lock.name = *symbol;
    lock.name_source = LockNameSource::kSymbol;
  } else if (lock.init_site.known()) {
    site = &lock.init_site;
    lock.name_source = LockNameSource::kInitSite;
  } else if (lock.first_use_site.known()) {
    site = &lock.first_use_site;
    lock.name_source = LockNameSource::kFirstUse;
  } else if (const SiteSummary* busiest = busiest_site(lock)) {
    site = &busiest->location;
    lock.name_source = LockNameSource::kBusiestSite;
  } else {
    lock.name_source = LockNameSource::kAddress;
  }
  if (site != nullptr) {
    lock.name = site->label;
    // A site inside the standard library (std::mutex::lock out of line) names no lock of the
    // program's: the caller it was taken from does.
    if (in_system_code(*site))
      if (const CodeLocation* caller = program_caller(process, lock)) {
        lock.name = caller->label;
        lock.name_source = LockNameSource::kCaller;
      }
  }
  // A label is never empty once symbolized; a site without a module reads "0x… (no module)".
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

std::string lock_family_name(const LockSummary& lock) {
  std::string name = lock_name(lock);
  if (lock.name_source != LockNameSource::kSymbol) return name;
  std::string family;
  for (size_t i = 0; i < name.size(); ++i) {
    family += name[i];
    if (name[i] != '[') continue;
    size_t end = i + 1;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    if (end > i + 1 && end < name.size() && name[end] == ']') i = end - 1;  // drop the digits
  }
  return family;
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
    case LockNameSource::kCaller:
    case LockNameSource::kBusiestSite:
      return fmt::format("{} {} at {}", what, is_lock_primitive(lock.primitive) ? "taken" : "used",
                         lock.name);
    case LockNameSource::kAddress:
      return fmt::format("{} at {}", what, lock.name);
  }
  return lock.name;
}

const char* lock_name_source_name(LockNameSource source) {
  switch (source) {
    case LockNameSource::kSymbol:
      return "symbol";
    case LockNameSource::kInitSite:
      return "init";
    case LockNameSource::kFirstUse:
      return "first-use";
    case LockNameSource::kBusiestSite:
      return "busiest-site";
    case LockNameSource::kCaller:
      return "caller";
    case LockNameSource::kAddress:
      return "address";
  }
  return "address";
}

}  // namespace lockscope
