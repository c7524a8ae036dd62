#include "analysis/compare/run_metrics.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "analysis/lock_kinds.h"
#include "analysis/lock_names.h"
#include "analysis/profile_views.h"

namespace lockscope::compare {
namespace {

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();
constexpr double kTail = 0.99;

// One run's figures of one entity, before they go into the table.
struct Figures {
  double acquisitions = 0;
  double contended = 0;
  double wait_ns = 0;
  LatencyHistogram waits;  // contended waits only: the p99 is of waits that happened
  double hold_ns = 0;
  std::string detail;
  uint32_t locks = 0;
  EntityKind kind = EntityKind::kProgram;
  std::string process, lock, site;
};

// In whole nanoseconds, as every other time: the histogram's interpolation gives fractions.
double tail_of(const LatencyHistogram& waits) {
  return waits.empty() ? kNoValue : std::round(waits.percentile(kTail));
}

// "git" for /usr/lib/git-core/git; "pid 1234" when the profile does not hold the executable.
std::string executable_name(const ProcessProfile& process) {
  if (process.executable.empty()) return fmt::format("pid {}", process.pid);
  return std::filesystem::path(process.executable).filename().string();
}

// "lock find_pack pack.c:120": what stays the same when the program is rebuilt. A site that was
// not symbolized to a line keeps its label (module and offset: the same build only).
std::string site_name(const SiteSummary& site) {
  const CodeLocation& where = site.location;
  std::string place;
  if (where.line > 0 && !where.file.empty()) {
    place = fmt::format("{}:{}", std::filesystem::path(where.file).filename().string(), where.line);
    if (!where.function.empty()) place = where.function + " " + place;
  } else if (!where.label.empty()) {
    place = where.label;
  } else {
    place = fmt::format("{:#x}", where.offset);
  }
  return operation_name(site.operation) + " " + place;
}

class TableBuilder {
 public:
  TableBuilder(std::size_t runs, bool sites) : runs_(runs), sites_(sites) {}

  void add_run(std::size_t run, const Profile& profile) {
    const ProfileViews views(profile);
    std::map<std::string, Figures> figures;
    Figures& program = figures[""];
    const std::vector<std::string> names = process_names(profile);
    for (std::size_t p = 0; p < profile.processes.size(); ++p) {
      const ProcessProfile& process = profile.processes[p];
      const ProcessView& view = views.processes()[p];
      const std::string& name = names[p];
      process_keys_.resize(std::max(process_keys_.size(), p + 1));
      process_keys_[p] = name;
      Figures& whole = figures[name];
      whole.kind = EntityKind::kProcess;
      whole.process = name;
      whole.acquisitions = static_cast<double>(view.acquired);
      whole.contended = static_cast<double>(view.contended);
      whole.wait_ns = static_cast<double>(view.lock_wait_ns);
      for (const ThreadSummary& thread : process.threads) whole.waits.add(thread.waits_only);
      for (const LockSummary& lock : process.locks) add_lock(figures, name, lock, whole);
      program.acquisitions += whole.acquisitions;
      program.contended += whole.contended;
      program.wait_ns += whole.wait_ns;
      program.waits.add(whole.waits);
      program.hold_ns += whole.hold_ns;
    }
    for (auto& [key, one] : figures) store(run, key, one);
    add_findings(run, views);
  }

  RunMetrics finish(std::vector<std::string> run_names) {
    RunMetrics table;
    table.runs = std::move(run_names);
    for (auto& [key, entity] : entities_) table.entities.push_back(std::move(entity));
    // The program first (its key "" sorts first), then by key: processes before their locks,
    // locks before their sites.
    for (auto& [key, finding] : findings_) table.findings.push_back(std::move(finding));
    return table;
  }

 private:
  void add_lock(std::map<std::string, Figures>& figures, const std::string& process,
                const LockSummary& lock, Figures& whole) {
    if (!lock_was_used(lock)) return;
    const std::string lock_key = process + "/" + lock_name(lock);
    Figures& group = figures[lock_key];
    group.kind = EntityKind::kLock;
    group.process = process;
    group.lock = lock_name(lock);
    group.acquisitions += static_cast<double>(lock.acquisitions);
    group.contended += static_cast<double>(lock.contended);
    group.wait_ns += static_cast<double>(lock.wait_sum_ns);
    group.waits.add(lock.waits_only);
    group.hold_ns += static_cast<double>(lock.hold_sum_ns);
    group.detail = lock_kind_name(lock);
    group.locks += 1;
    if (is_lock_primitive(lock.primitive)) whole.hold_ns += static_cast<double>(lock.hold_sum_ns);
    if (!sites_) return;
    for (const SiteSummary& site : lock.sites) {
      if (!counts_as_acquisition(site.operation)) continue;
      const std::string site_key = site_name(site);
      Figures& one = figures[lock_key + "/" + site_key];
      one.kind = EntityKind::kSite;
      one.process = process;
      one.lock = group.lock;
      one.site = site_key;
      one.acquisitions += static_cast<double>(site.count - site.failed);
      one.contended += static_cast<double>(site.contended);
      one.wait_ns += static_cast<double>(site.wait_sum_ns);
      one.waits.add(site.wait);
      one.hold_ns += static_cast<double>(site.hold_sum_ns);
      one.detail = operation_name(site.operation);
    }
  }

  void store(std::size_t run, const std::string& key, const Figures& one) {
    auto [it, added] = entities_.try_emplace(key);
    EntityRuns& entity = it->second;
    if (added) describe(entity, key, one);
    if (!one.detail.empty()) entity.detail = one.detail;
    entity.same_name_locks = std::max(entity.same_name_locks, one.locks);
    entity.present[run] = true;
    const double values[kMetricCount] = {one.acquisitions, one.contended, one.wait_ns,
                                         tail_of(one.waits), one.hold_ns};
    for (std::size_t m = 0; m < kMetricCount; ++m) entity.values[m][run] = values[m];
  }

  // Its kind and names, and no value in any run yet.
  void describe(EntityRuns& entity, const std::string& key, const Figures& one) {
    entity.key = key;
    entity.kind = one.kind;
    entity.process = one.process;
    entity.lock = one.lock;
    entity.site = one.site;
    for (Metric metric : kMetrics) {
      const bool tail = metric == Metric::kWaitP99Ns;
      entity.values[static_cast<std::size_t>(metric)].assign(runs_, tail ? kNoValue : 0.0);
    }
    entity.present.assign(runs_, false);
  }

  void add_findings(std::size_t run, const ProfileViews& views) {
    for (const Finding& finding : views.findings()) {
      if (finding.rule == "verdict") continue;  // the program's wait, compared as a figure
      std::string key = finding.rule;
      for (const FindingLock& which : finding.locks) {
        const std::string& process =
            which.process < process_keys_.size() ? process_keys_[which.process] : std::string();
        key += " " + process + "/" + lock_name(views.lock(which));
      }
      auto [it, added] = findings_.try_emplace(key);
      if (added) {
        it->second.key = key;
        it->second.rule = finding.rule;
        it->second.title = finding.title;
        it->second.present.assign(runs_, false);
      }
      it->second.present[run] = true;
    }
  }

  std::size_t runs_;
  bool sites_;
  std::vector<std::string> process_keys_;  // the current run's, by process index
  std::map<std::string, EntityRuns> entities_;
  std::map<std::string, FindingRuns> findings_;
};

}  // namespace

std::vector<std::string> process_names(const Profile& profile) {
  std::vector<std::string> names;
  std::map<std::string, int> seen_executables;
  for (const ProcessProfile& process : profile.processes) {
    std::string name = executable_name(process);
    if (int n = ++seen_executables[name]; n > 1) name += fmt::format("#{}", n);
    names.push_back(std::move(name));
  }
  return names;
}

std::string_view metric_name(Metric metric) {
  switch (metric) {
    case Metric::kAcquisitions:
      return "acquisitions";
    case Metric::kContended:
      return "contended";
    case Metric::kWaitNs:
      return "wait";
    case Metric::kWaitP99Ns:
      return "wait_p99";
    case Metric::kHoldNs:
      return "hold";
  }
  return "?";
}

bool metric_is_time(Metric metric) {
  return metric == Metric::kWaitNs || metric == Metric::kWaitP99Ns || metric == Metric::kHoldNs;
}

const EntityRuns* RunMetrics::find(const std::string& key) const {
  auto it = std::lower_bound(entities.begin(), entities.end(), key,
                             [](const EntityRuns& e, const std::string& k) { return e.key < k; });
  return it != entities.end() && it->key == key ? &*it : nullptr;
}

RunMetrics run_metrics(const std::vector<const Profile*>& runs, bool sites) {
  TableBuilder builder(runs.size(), sites);
  std::vector<std::string> names;
  for (std::size_t run = 0; run < runs.size(); ++run) {
    builder.add_run(run, *runs[run]);
    names.push_back(runs[run]->directory);
  }
  return builder.finish(std::move(names));
}

Spread spread_of(const std::vector<double>& values) {
  std::vector<double> numbers;
  for (double v : values)
    if (!std::isnan(v)) numbers.push_back(v);
  Spread spread;
  spread.count = numbers.size();
  if (numbers.empty()) return {kNoValue, kNoValue, kNoValue, 0};
  std::sort(numbers.begin(), numbers.end());
  const std::size_t n = numbers.size();
  spread.median = n % 2 ? numbers[n / 2] : (numbers[n / 2 - 1] + numbers[n / 2]) / 2;
  spread.min = numbers.front();
  spread.max = numbers.back();
  return spread;
}

}  // namespace lockscope::compare
