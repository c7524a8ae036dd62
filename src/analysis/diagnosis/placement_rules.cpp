// The contention family, over several locks at once: where the locks are. asymmetric-contention
// (locks of one name, a striped or hashed set, of which a few take most of the waiting) and
// false-sharing (two busy locks, taken by different threads, in one cache line).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/diagnosis/contention_figures.h"
#include "analysis/diagnosis/lock_pair_cost.h"
#include "analysis/diagnosis/rule_table.h"
#include "analysis/duration_format.h"
#include "analysis/lock_names.h"
#include "analysis/profile_views.h"

namespace lockscope {
namespace {

// asymmetric-contention: an instance is hot when it waited at least four times as long as the
// mean of the others. A stripe of a uniformly hashed key stream gets its share of the waits plus
// or minus a few standard deviations (√n of n waits), so four times the mean is beyond hashing's
// chance once the waits are material; and the hot instances together have most (more than half)
// of the name's wait, so that a few unlucky stripes of many do not make the finding.
constexpr double kHotInstanceFactor = 4;
constexpr double kHotWaitShare = 0.5;
// ... and the hot ones' contended acquisitions are a pattern, not a few collisions: at least ten
// (serial-bottleneck's floor), and more than their share of the acquisitions predicts by three
// standard deviations (contended acquisitions spread over a uniformly used set as a Poisson count
// does: sysbench mutex, picking 512 mutexes at random, had 20 contended of 200,034 acquisitions,
// and the 3 locks that happened to get them were "hot" by wait alone).
constexpr uint64_t kMinHotContended = 10;
constexpr double kHotContendedSigmas = 3;

// false-sharing: x86-64's (and most ARM64 cores') cache line. Each of the two locks is taken
// often enough that, were every acquisition to find the line on the other CPU, the line's moves
// would be the material share (1 %) of a thread's time: a one-way line transfer costs 90 ns on
// the lab's 2-CPU guest (bench/results/bench-all-2cpu-kvm-quieter-earlier.txt, `lockscope bench
// c2c`), so 1 % of a millisecond is ~111 acquisitions.
constexpr uint64_t kCacheLineBytes = 64;
constexpr double kLineTransferNs = 90;
constexpr double kSharedLinePerMs = kMaterialShare * 1e6 / kLineTransferNs;

std::string ordinal(size_t n) {
  const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th"
                       : n % 10 == 1                    ? "st"
                       : n % 10 == 2                    ? "nd"
                       : n % 10 == 3                    ? "rd"
                                                        : "th";
  return fmt::format("{}{}", n, suffix);
}

// Locks of one name of which a few (the hot ones) took most of the waiting.
struct HotGroup {
  std::string name;
  std::vector<size_t> members;  // indexes into ProcessProfile::locks
  std::vector<size_t> hot;      // the hot ones, most wait first
  uint64_t wait_ns = 0, acquisitions = 0;
  uint64_t hot_wait_ns = 0, hot_acquisitions = 0, hot_contended = 0, cold_contended = 0;
};

std::vector<HotGroup> hot_groups(const ProfileViews& views, size_t p) {
  const ProcessProfile& process = views.profile().processes[p];
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t l = 0; l < process.locks.size(); ++l) {
    const LockSummary& lock = process.locks[l];
    if (is_lock_primitive(lock)) by_name[lock_family_name(lock)].push_back(l);
  }
  std::vector<HotGroup> groups;
  for (auto& [name, members] : by_name) {
    if (members.size() < 2) continue;
    HotGroup group;
    group.name = name;
    group.members = members;
    for (size_t l : members) {
      group.wait_ns += process.locks[l].wait_sum_ns;
      group.acquisitions += process.locks[l].acquisitions;
    }
    if (group.wait_ns == 0) continue;
    for (size_t l : members) {
      const LockSummary& lock = process.locks[l];
      const double others_mean =
          double(group.wait_ns - lock.wait_sum_ns) / double(members.size() - 1);
      if (lock.wait_sum_ns > 0 && double(lock.wait_sum_ns) >= kHotInstanceFactor * others_mean) {
        group.hot.push_back(l);
        group.hot_wait_ns += lock.wait_sum_ns;
        group.hot_acquisitions += lock.acquisitions;
        group.hot_contended += lock.contended;
      } else {
        group.cold_contended += lock.contended;
      }
    }
    if (group.hot.empty() || group.hot.size() == members.size()) continue;
    if (double(group.hot_wait_ns) <= kHotWaitShare * double(group.wait_ns) ||
        !material(group.hot_wait_ns, views, p))
      continue;
    const uint64_t contended = group.hot_contended + group.cold_contended;
    const double expected =
        group.acquisitions == 0
            ? 0
            : double(contended) * double(group.hot_acquisitions) / double(group.acquisitions);
    if (group.hot_contended < kMinHotContended ||
        double(group.hot_contended) <= expected + kHotContendedSigmas * std::sqrt(expected))
      continue;
    std::sort(group.hot.begin(), group.hot.end(), [&](size_t a, size_t b) {
      return process.locks[a].wait_sum_ns > process.locks[b].wait_sum_ns;
    });
    groups.push_back(std::move(group));
  }
  return groups;
}

void detect_asymmetry(const ProfileViews& views, size_t p, std::vector<Finding>& findings) {
  const ProcessProfile& process = views.profile().processes[p];
  for (const HotGroup& group : hot_groups(views, p)) {
    const std::string& name = group.name;
    const std::vector<size_t>& members = group.members;
    const std::vector<size_t>& hot = group.hot;
    const size_t count = members.size();
    const uint64_t wait_ns = group.wait_ns, acquisitions = group.acquisitions;
    const uint64_t hot_wait_ns = group.hot_wait_ns, hot_acquisitions = group.hot_acquisitions;
    const uint64_t hot_contended = group.hot_contended, cold_contended = group.cold_contended;
    // An instance is known by its place among the name's locks in address order (a striped
    // array's index) and its address.
    std::vector<uint64_t> addresses;
    for (size_t l : members) addresses.push_back(process.locks[l].address);
    std::sort(addresses.begin(), addresses.end());
    auto place = [&](const LockSummary& lock) {
      return size_t(std::lower_bound(addresses.begin(), addresses.end(), lock.address) -
                    addresses.begin()) +
             1;
    };
    const LockSummary& hottest = process.locks[hot.front()];
    const double wait_share = double(hot_wait_ns) / double(wait_ns);
    const double use_share =
        acquisitions == 0 ? 0 : double(hot_acquisitions) / double(acquisitions);
    const std::string rest =
        fmt::format(": {} of {} {} {} of waits", hot.size(), count,
                    hot.size() == 1 ? "has" : "have", format_share(wait_share));
    Finding finding;
    finding.rule = "asymmetric-contention";
    finding.title = title_name(hottest, rest.size()) + rest;
    for (size_t l : hot) finding.locks.push_back({p, l});
    const CodeLocation& named_at = hottest.name_source == LockNameSource::kInitSite
                                       ? hottest.init_site
                                       : hottest.first_use_site;
    if (named_at.known()) finding.sites.push_back(named_at);
    for (const SiteSummary& site : hottest.sites)
      if (site.contended > 0 && counts_as_acquisition(site.operation) && finding.sites.size() < 4)
        finding.sites.push_back(site.location);
    finding.evidence.push_back(
        {"locks", double(count),
         fmt::format("{} locks named {}: {} of waiting, {} acquisitions", count, name,
                     duration(wait_ns), format_count(acquisitions))});
    std::string hot_list;
    for (size_t i = 0; i < hot.size(); ++i) {
      const LockSummary& lock = process.locks[hot[i]];
      const std::string which =
          fmt::format("the {} of {} by address ({:#x})", ordinal(place(lock)), count, lock.address);
      if (i < 3) {
        finding.evidence.push_back(
            {"hot_lock_wait_ns", double(lock.wait_sum_ns),
             fmt::format(
                 "{}: {} of the waits, {} of the acquisitions, {} of its own contended", which,
                 format_share(double(lock.wait_sum_ns) / double(wait_ns)),
                 format_share(acquisitions == 0 ? 0
                                                : double(lock.acquisitions) / double(acquisitions)),
                 format_share(conflict_rate(lock)))});
        hot_list += (i == 0 ? "" : ", ") +
                    fmt::format("the {} ({:#x})", ordinal(place(lock)), lock.address);
      }
    }
    if (hot.size() > 3) hot_list += fmt::format(" and {} more", hot.size() - 3);
    uint64_t cold_acquisitions = acquisitions - hot_acquisitions;
    finding.evidence.push_back({"hot_wait_share", wait_share,
                                fmt::format("the hot ones: {} of the waits, {} of the acquisitions",
                                            format_share(wait_share), format_share(use_share))});
    finding.evidence.push_back(
        {"others_conflict_rate",
         cold_acquisitions == 0 ? 0 : double(cold_contended) / double(cold_acquisitions),
         fmt::format(
             "the other {}: {} of their acquisitions contended, against {} on the hot ones",
             count - hot.size(),
             format_share(
                 cold_acquisitions == 0 ? 0 : double(cold_contended) / double(cold_acquisitions)),
             format_share(
                 hot_acquisitions == 0 ? 0 : double(hot_contended) / double(hot_acquisitions)))});
    finding.advice = fmt::format(
        "rebalance: {} of {} take{} {} of the acquisitions; hash or stripe by another key",
        hot_list, count, hot.size() == 1 ? "s" : "", format_share(use_share));
    finding.time_at_stake_ns = hot_wait_ns;
    findings.push_back(std::move(finding));
  }
}

// True when no one thread took as many locks as the two took together: then they were not both
// taken by one thread alone. (The profile does not say which thread took which lock; this is
// what its per-thread counts prove.)
bool taken_by_different_threads(const ProcessProfile& process, const LockSummary& a,
                                const LockSummary& b) {
  const uint64_t both = a.acquisitions + b.acquisitions;
  for (const ThreadSummary& thread : process.threads)
    if (thread.acquisitions >= both) return false;
  return true;
}

void detect_shared_lines(const ProfileViews& views, size_t p, std::vector<Finding>& findings) {
  const ProcessProfile& process = views.profile().processes[p];
  std::vector<size_t> busy;
  for (size_t l = 0; l < process.locks.size(); ++l) {
    const LockSummary& lock = process.locks[l];
    if (is_lock_primitive(lock) && acquisitions_per_ms(lock, process) >= kSharedLinePerMs)
      busy.push_back(l);
  }
  std::sort(busy.begin(), busy.end(), [&](size_t a, size_t b) {
    return process.locks[a].address < process.locks[b].address;
  });
  for (size_t i = 0; i + 1 < busy.size(); ++i) {
    const LockSummary& a = process.locks[busy[i]];
    const LockSummary& b = process.locks[busy[i + 1]];
    if (a.address == b.address || a.address / kCacheLineBytes != b.address / kCacheLineBytes)
      continue;
    if (!taken_by_different_threads(process, a, b)) continue;
    const uint64_t locking_ns = uint64_t(double(a.acquisitions) * uncontended_pair_ns(a.primitive) +
                                         double(b.acquisitions) * uncontended_pair_ns(b.primitive));
    const std::string rest = " share one 64-byte cache line";
    // The two names share what the title leaves: each gets half of it.
    const size_t each = (kTitleColumns - rest.size() - std::string_view(" and ").size()) / 2;
    const std::string name_a = title_name(a, kTitleColumns - each);
    const std::string name_b = title_name(b, kTitleColumns - each);
    Finding finding;
    finding.rule = "false-sharing";
    finding.title = fmt::format("{} and {}{}", name_a, name_b, rest);
    finding.locks = {{p, busy[i]}, {p, busy[i + 1]}};
    for (const LockSummary* lock : {&a, &b})
      for (const SiteSummary& site : lock->sites)
        if (counts_as_acquisition(site.operation)) {
          finding.sites.push_back(site.location);
          break;
        }
    for (const LockSummary* lock : {&a, &b})
      finding.evidence.push_back(
          {"acquisitions", double(lock->acquisitions),
           fmt::format("{} at {:#x}: {} acquisitions, {:.0f} a millisecond",
                       lock_name_phrase(*lock), lock->address, format_count(lock->acquisitions),
                       acquisitions_per_ms(*lock, process))});
    finding.evidence.push_back(
        {"line_address", double(a.address / kCacheLineBytes * kCacheLineBytes),
         fmt::format("both in the 64-byte line at {:#x}; no thread took as many locks as the two "
                     "together, so different threads took them",
                     a.address / kCacheLineBytes * kCacheLineBytes)});
    finding.evidence.push_back(
        {"locking_ns", double(locking_ns),
         fmt::format("{} in their lock and unlock calls at this machine's uncontended price; each "
                     "that finds the line on another CPU costs a line transfer more "
                     "(`lockscope bench c2c`)",
                     duration(locking_ns))});
    finding.advice =
        fmt::format("give each its own cache line (align or pad to 64 bytes): {} and {}",
                    lock_name(a), lock_name(b));
    finding.time_at_stake_ns = locking_ns;
    findings.push_back(std::move(finding));
  }
}

}  // namespace

void detect_asymmetric_contention(const ProfileViews& views, std::vector<Finding>& findings) {
  for (size_t p = 0; p < views.profile().processes.size(); ++p)
    detect_asymmetry(views, p, findings);
}

void detect_false_sharing(const ProfileViews& views, std::vector<Finding>& findings) {
  for (size_t p = 0; p < views.profile().processes.size(); ++p)
    detect_shared_lines(views, p, findings);
}

}  // namespace lockscope
