// The neutral Profile model: what the reader produces from profile files and every report writer
// consumes. Plain values, no I/O. Times are nanoseconds.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/log_histogram.h"
#include "common/profile_format.h"
#include "common/trace_format.h"
#include "common/tsc_calibration.h"

namespace lockscope {

// Counts by bucket of LogHistogramLayout, kept sparse: a profile has a histogram per thread, per
// call site and nine per lock (its waits, waits only and holds, whole and by rwlock side), most of
// them with a few buckets or none; 200 counters each (1.6 KB) made a report take some 300 times
// its file's size in memory (a 6 MB profile, 3 GB). Here a histogram costs 16 bytes a bucket used.
class LatencyHistogram {
 public:
  struct Bin {
    uint64_t count = 0;
    uint16_t bucket = 0;
    bool operator==(const Bin&) const = default;
  };

  uint64_t count(int bucket) const;
  // Adds `count` to `bucket` (0 <= bucket < kBuckets).
  void add(int bucket, uint64_t count);
  void add(const LatencyHistogram& other);
  // The buckets with a count, in ascending order.
  const std::vector<Bin>& bins() const { return bins_; }
  bool empty() const { return bins_.empty(); }
  bool operator==(const LatencyHistogram&) const = default;

  uint64_t total() const;
  // Count of values v with lower < v <= upper (bounds in ns, on bucket boundaries).
  uint64_t count_in(uint64_t lower_ns, uint64_t upper_ns) const;
  // q in [0, 1]; interpolated linearly inside the bucket; 0 when empty.
  double percentile(double q) const;

 private:
  std::vector<Bin> bins_;
};

// The seed report's wait buckets: <=1, <=10, <=100, <=1000, >1000 microseconds.
inline constexpr std::array<uint64_t, 4> kReportBucketBoundsNs = {1000, 10000, 100000, 1000000};
std::array<uint64_t, 5> report_buckets(const LatencyHistogram& histogram);

struct CodeLocation {
  uint32_t module = format::kNoModule;
  uint64_t offset = 0;  // ELF vaddr in the module (absolute address when no module)
  // Filled in by symbolization:
  std::string function;  // demangled, may be empty
  std::string file;      // may be empty
  int line = 0;
  std::string label;                      // never empty once symbolized
  std::vector<std::string> inlined_from;  // enclosing frames, innermost first: "function file:line"
  bool known() const { return module != format::kNoModule || offset != 0; }
};

// Contended acquisitions that waited behind holds taken at one site: the holder that released the
// lock to the waiter (holder_site unknown: the lock's first wait, or behind readers).
// Version 3 files may also name the call stacks: the one the waits were made from, and the
// holder's, from its acquisition (innermost frame: its acquire site) or at its release (innermost
// frame: the release's call site): indexes into ProcessProfile::stacks, kNoStack when not captured.
struct Blame {
  CodeLocation holder_site;
  uint64_t waits = 0;
  uint64_t wait_ns = 0;
  static constexpr size_t kNoStack = SIZE_MAX;
  size_t waiter_stack = kNoStack;
  size_t holder_stack = kNoStack;
  bool holder_stack_at_acquire = false;
};

// Contended acquisitions at a site that waited from one call stack.
struct SiteStack {
  size_t stack = 0;  // index into ProcessProfile::stacks
  uint64_t waits = 0;
  uint64_t wait_ns = 0;
};

// An acquire site's timed holds released from one call stack (those whose stack was captured):
// the holds they stand for and their time, each sampled hold weighted by the holds it samples
// (an estimate when the site's holds were sampled), scaled down where the weights add up to more
// than the site's acquisitions or hold estimate (its last sample stood for holds that never came).
struct HoldStack {
  size_t stack = 0;  // index into ProcessProfile::stacks
  uint64_t holds = 0;
  uint64_t hold_ns = 0;
};

struct SiteSummary {
  format::Operation operation = format::Operation::kLock;
  CodeLocation location;
  uint64_t count = 0;
  uint64_t contended = 0;
  uint64_t failed = 0;
  uint64_t wait_sum_ns = 0;
  uint64_t wait_max_ns = 0;
  uint64_t hold_sum_ns = 0;    // estimate when holds were sampled (already scaled by the runtime)
  uint64_t hold_error_ns = 0;  // 95 % bound of that estimate's sampling error (0: exact)
  uint64_t hold_max_ns = 0;
  uint64_t hold_samples = 0;
  LatencyHistogram wait;  // contended waits only; uncontended acquisitions are "no wait"
  LatencyHistogram hold;
  uint64_t behind_readers = 0;    // rwlock acquire: waits begun while readers held it
  uint64_t behind_writer = 0;     // rwlock acquire: waits begun while a writer held it
  uint64_t with_waiters = 0;      // signal/broadcast sent while a thread waited
  uint64_t without_waiters = 0;   // signal/broadcast that found no waiter
  uint64_t arrived_last = 0;      // barrier: arrivals that completed the barrier
  std::vector<Blame> blame;       // contended acquisitions, by the holder site they waited behind
  std::vector<SiteStack> stacks;  // contended acquisitions whose stack was captured, by stack
  std::vector<HoldStack> hold_stacks;  // timed holds whose release stack was captured, by stack
  // --stacks all: acquisitions by stack (SiteStack::waits counts acquisitions; wait_ns is 0).
  std::vector<SiteStack> acquire_stacks;
  uint64_t cross_cpu_handoffs = 0;  // contended acquisitions whose lock came from another CPU
  uint64_t same_cpu_handoffs = 0;   // ... from the same CPU (the rest: not known)
  uint64_t acquisitions() const { return format::is_acquire(operation) ? count - failed : 0; }
};

// One side of a lock: all of a mutex or spinlock, or the read or the write side of an rwlock, or
// the waits on a condvar, semaphore or barrier.
struct SideSummary {
  uint64_t acquisitions = 0;  // successful acquisitions, or completed waits
  uint64_t contended = 0;
  uint64_t failed = 0;
  uint64_t wait_sum_ns = 0;
  uint64_t wait_max_ns = 0;
  uint64_t hold_sum_ns = 0;
  uint64_t hold_error_ns = 0;  // 95 % bound: the sites' bounds combined (independent samples)
  uint64_t hold_max_ns = 0;
  LatencyHistogram wait;        // includes uncontended acquisitions in the <= 1 ns bucket
  LatencyHistogram waits_only;  // contended acquisitions and timed-out waits only
  LatencyHistogram hold;
  uint64_t cross_cpu_handoffs = 0;  // contended acquisitions whose lock came from another CPU
  uint64_t same_cpu_handoffs = 0;   // ... from the same one
  void add(const SiteSummary& site);
  void finish();  // adds the uncontended acquisitions to `wait`
};

// A lock: its identity and call sites, and (as its SideSummary, computed by finish()) the totals
// over them. For an rwlock the read and write sides are also kept apart; for a condvar, semaphore
// or barrier "acquisitions" are completed waits. A mutex's wait totals include its re-acquisitions
// after condition waits (reacquire_*).
// How a lock's name was found (lock_names.h), best first.
enum class LockNameSource : uint8_t {
  kSymbol,       // the data object whose bytes hold it: "account_a", "cache+0x40"
  kInitSite,     // its *_init call: "Statistics kvcache.cpp:32"
  kFirstUse,     // its first acquire or wait (heap and stack locks, every std::mutex)
  kBusiestSite,  // the acquire site with the most calls (older profiles, which lack the first use)
  kCaller,       // its site lies in library code (std::mutex::lock): the program's own frame on
                 // the stacks through it, most waits first
  kAddress,      // nothing better: "0x7f12a0"
};

struct LockSummary : SideSummary {
  uint64_t address = 0;
  uint32_t generation = 0;
  format::Primitive primitive = format::Primitive::kMutex;
  format::MutexKind kind = format::MutexKind::kUnknown;
  uint32_t flags = 0;
  uint32_t capacity = 0;  // barrier count, semaphore initial value
  CodeLocation init_site;
  CodeLocation first_use_site;  // no init seen: the site of its generation's first acquire or wait
  // What a person calls it, filled in by symbolization (lock_names.h): never empty once
  // symbolized, and the same in every format and in every run of the same build of the program.
  std::string name;
  LockNameSource name_source = LockNameSource::kAddress;
  uint32_t same_name_locks = 1;  // locks of its process with this name, itself included
  uint64_t owner_changes = 0;
  std::vector<SiteSummary> sites;
  uint64_t releases = 0;
  uint64_t events = 0;             // signals, broadcasts, posts
  uint64_t reacquisitions = 0;     // mutex re-taken inside pthread_cond_wait
  uint64_t reacquire_wait_ns = 0;  // ... and the time that took (part of wait_sum_ns)
  uint64_t wakeups = 0;            // condvar: waits woken by a signal (cond-wake sites)
  uint64_t wake_latency_ns = 0;    // ... from the signal to the return, less mutex contention
  SideSummary read_side;           // rwlock only
  SideSummary write_side;          // rwlock only
  void finish();
};

struct ThreadSummary {
  uint32_t tid = 0;
  std::string name;
  uint32_t flags = 0;
  uint64_t acquisitions = 0;
  uint64_t releases = 0;
  uint64_t contended = 0;
  uint64_t failed = 0;
  uint64_t wait_sum_ns = 0;
  uint64_t wait_max_ns = 0;
  LatencyHistogram wait;  // lock waits; includes uncontended acquisitions in the <= 1 ns bucket
  LatencyHistogram waits_only;  // contended acquisitions only
  std::array<uint64_t, format::kPrimitiveSlots> wait_ns_by_primitive{};  // never summed together
  uint64_t barrier_last_arrivals = 0;
  // Where the profile holds them (lifetime_known, cpu_known, sched_known): the thread's life in ns
  // since the process's runtime started (end_ns 0: still running when the file was written), the
  // CPU time it used, and its scheduling policy (SCHED_OTHER, SCHED_FIFO, SCHED_RR...) and
  // priority when last seen.
  bool lifetime_known = false;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  bool cpu_known = false;
  uint64_t cpu_ns = 0;
  bool sched_known = false;
  int32_t sched_policy = 0;
  int32_t sched_priority = 0;
};

struct ModuleSummary {
  std::string path;
  std::string build_id_hex;
  uint64_t load_bias = 0;
  uint64_t start = 0;
  uint64_t end = 0;
};

// A lock acquired (blocking) while another was a thread's innermost held lock: the first time in
// the process, with where each was acquired.
struct LockOrderEdge {
  size_t from_lock = 0;    // index into ProcessProfile::locks: the lock held
  size_t to_lock = 0;      // the lock acquired while holding it
  CodeLocation from_site;  // where the held lock was acquired (unknown: !known())
  CodeLocation to_site;
  uint32_t tid = 0;
  format::Operation to_operation = format::Operation::kLock;
  format::Operation from_operation = format::Operation::kLock;  // kLock also when not known
  // The call stack of the acquisition of `to_lock` (from `to_site` outwards), captured when the
  // edge was first seen: index into ProcessProfile::stacks, kNoStack when none was.
  static constexpr size_t kNoStack = SIZE_MAX;
  size_t stack = kNoStack;
};

// Trace mode (record --trace): one thread's file.
struct TraceThread {
  uint32_t tid = 0;
  std::string file;
  uint64_t events = 0;          // events read from it
  uint64_t overwritten = 0;     // a ring's oldest events, written over
  uint64_t dropped = 0;         // not written: the file was full
  uint64_t dropped_no_key = 0;  // of those: its key table was full (version 2)
  uint64_t filtered = 0;        // left out by --min-wait
  bool closed = false;          // the thread ended, or the process wrote its final profile
  std::string problem;          // the file is damaged: what was read of it, and why not the rest
};

// One traced event; times are nanoseconds since the process image started.
struct TraceRecord {
  uint64_t time_ns = 0;
  uint64_t ticks = 0;  // the clock's own reading (durations: ProcessTrace::ticks_to_ns)
  uint32_t tid = 0;
  format::TraceKind kind = format::TraceKind::kCall;
  format::Operation operation = format::Operation::kLock;
  uint8_t flags = 0;        // format::TraceEventFlags
  uint64_t object = 0;      // the lock's address (0 for thread events)
  uint32_t generation = 0;  // its generation (kCall)
  size_t site = 0;          // index into ProcessTrace::sites (kCall, kWaitBegin, holds)
  std::string name;         // kThreadName
};

struct ProcessTrace {
  bool present = false;
  uint64_t ns_per_tick_q32 = uint64_t{1} << 32;  // the runtime's conversion, for exact durations
  uint64_t ticks_to_ns(uint64_t ticks) const { return ticks_to_ns_q32(ticks, ns_per_tick_q32); }
  bool ring = false;         // --trace-full ring
  uint64_t min_wait_ns = 0;  // --min-wait (0: every event)
  // The process ended without an exit path after its trace began (SIGKILL): its profile is a
  // snapshot, and its figures were rebuilt from the trace, which has every event to the end.
  bool cut_short = false;
  // Cut short, and its figures were rebuilt from the trace: only when the trace lost nothing (no
  // --min-wait, nothing dropped or overwritten, every thread's file made); else they are the
  // snapshot's, which counted every call up to it.
  bool rebuilt = false;
  std::vector<TraceThread> threads;
  std::vector<CodeLocation> sites;  // the events' call sites, each once
  std::vector<TraceRecord> events;  // by thread, each thread's in the order it wrote them
  uint64_t lost() const;            // events dropped or overwritten, over all threads
};

struct ProcessProfile {
  std::string file;  // the profile file it came from
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint64_t start_realtime_ns = 0;
  uint64_t duration_ns = 0;
  double ticks_per_second = 0;
  format::ClockSource clock_source = format::ClockSource::kTsc;
  uint32_t hold_sample_period = 1;
  format::ExitPath exit_path = format::ExitPath::kExit;
  int32_t exit_status = -1;
  bool parent_was_profiled = false;
  std::string exec_target;        // ended by exec: the program exec'd, as named ("" when not known)
  std::string exec_resolved;      // the file it ran (a PATH search's find); "" in older files
  std::string exec_unprofilable;  // why the runtime was not loaded into it, judged before the
                                  // exec ("FILE is statically linked"); "" if it was, or older file
  std::string executable;
  std::vector<std::string> arguments;
  uint32_t online_cpus = 0;  // CPUs the process could run on; 0: not known (older files)
  std::vector<ModuleSummary> modules;
  std::vector<ThreadSummary> threads;
  std::vector<LockSummary> locks;
  std::vector<LockOrderEdge> lock_order;
  std::vector<std::vector<CodeLocation>> stacks;  // call stacks, innermost frame first
  std::map<format::Counter, uint64_t> counters;
  uint32_t unknown_sections = 0;  // of types this reader does not know (a newer writer's), skipped
  ProcessTrace trace;
  uint64_t counter(format::Counter which) const {
    auto it = counters.find(which);
    return it == counters.end() ? 0 : it->second;
  }
};

struct ProfileProblem {
  std::string file;
  std::string message;
};

struct Profile {
  std::string directory;
  std::vector<ProcessProfile> processes;  // ordered by start time
  std::vector<ProfileProblem> problems;   // files that could not be read, and why
  // Strings that were not valid UTF-8 (a Latin-1 argv or path), their bad bytes now written as
  // \xHH: repair_profile_strings (analysis/utf8_repair.h).
  uint64_t repaired_strings = 0;
};

// Whether a site's calls are among its lock's acquisitions and contended ones
// (LockSummary::finish): acquires and waits, not a condvar's re-acquires of its mutex nor its
// wake-ups.
bool counts_as_acquisition(format::Operation operation);

std::string operation_name(format::Operation operation);
std::string primitive_name(format::Primitive primitive);
// "mutex/recursive+robust", "rwlock", "condvar", "spinlock", "semaphore", "barrier(4)".
std::string lock_kind_name(const LockSummary& lock);
std::string exit_path_name(format::ExitPath path);
std::string trace_kind_name(format::TraceKind kind);
// "SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_BATCH", "SCHED_IDLE", "SCHED_DEADLINE" for
// ThreadSummary::sched_policy (Linux's numbers); "SCHED_<n>" for a number Linux does not define.
std::string sched_policy_name(int32_t policy);

}  // namespace lockscope
