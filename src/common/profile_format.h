// The on-disk profile format: the only thing the runtime and the CLI share.
//
// One file per profiled process, `<pid>-<start ns>.lsprof`, written once at exit to a temporary
// name and renamed, so a reader never sees half a file from a finished process. Layout:
//
//   FileHeader | (SectionHeader payload)* | SectionHeader{kEnd}
//
// Every section carries its record size, record count, payload size and a CRC-32 of its payload;
// the header carries the total file size. A reader can therefore tell a truncated file (size
// mismatch), a corrupt one (CRC mismatch) and one written by a newer lockscope (version) apart and
// name the problem. Records are packed little-endian PODs; their sizes are pinned with
// static_assert so that any change to a record is a deliberate format version bump.
// docs/profile-format.md describes it in prose. Strings live in the kStrings section and are
// referenced by (offset, length). Which record each section holds, its name, the version that
// introduced it and whether readers require it: profile_sections.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/operations.h"  // Primitive, Operation

namespace lockscope::format {

inline constexpr char kMagic[8] = {'L', 'K', 'S', 'C', 'O', 'P', 'E', '\0'};
inline constexpr uint32_t kVersion = 5;  // 5: first-use sites (kLockFirstUseSite), thread and
                                         // process facts; 4: exec verdicts; 3: lock order, blame,
                                         // CPU handoffs; 2: every primitive
inline constexpr uint32_t kOldestReadableVersion = 2;  // readers take files of versions 2..kVersion
inline constexpr char kFileSuffix[] = ".lsprof";
inline constexpr uint32_t kNoModule = 0xFFFFFFFFu;  // site offset is then an absolute address

enum class SectionType : uint32_t {
  kStrings = 1,
  kProcess = 2,
  kModules = 3,
  kThreads = 4,
  kLocks = 5,
  kSites = 6,
  kHistograms = 7,
  kCounters = 8,
  kLockOrder = 9,     // version 3: lock-order edges (optional: absent in version 2 files)
  kBlame = 10,        // version 3: whom contended acquisitions waited behind (optional, as above)
  kCpuHandoffs = 11,  // version 3: contended acquisitions by the CPU the lock came from (optional)
  kStackFrames = 12,  // version 3: the frames of the call stacks (optional, as above)
  kStacks = 13,       // version 3: call stacks, each a run of kStackFrames (optional)
  kSiteStacks = 14,   // version 3: contended acquisitions by site and call stack (optional)
  kOrderStacks = 15,  // version 3: the call stack of each lock-order edge's nested acquisition
                      // (optional; files without it have none)
  kBlameStacks = 16,  // version 3: the waiter's and the holder's call stacks of blame records
                      // (optional; files without it have none)
  kSiteHoldStacks = 17,     // version 3: timed holds by site and call stack of their release
                            // (optional; files without it have none)
  kSiteAcquireStacks = 18,  // version 3: --stacks all: acquisitions by site and call stack
                            // (optional; files without it have none)
  kThreadFacts = 19,        // version 4: each thread's lifetime, CPU time and scheduling policy
                            // (optional: files without it do not know them)
  kProcessFacts = 20,       // version 4: the CPUs the process could run on (optional, as above)
  // New types go here and move kLast: the section table (profile_sections.h), which both the
  // writer and the reader are driven by, then fails to compile until it describes it.
  kLast = kProcessFacts,
  kEnd = 0xFFFF,
};
inline constexpr uint32_t kSectionTypes = static_cast<uint32_t>(SectionType::kLast);  // kEnd aside

// True when `table` has one entry per value 1..kLast of Enum, in order (entry.*key is the value):
// the static_assert of a table indexed by a format enum (sections, counters).
template <typename Enum, typename Entry, size_t N, typename Key>
constexpr bool lists_each_value_in_order(const Entry (&table)[N], Key Entry::*key) {
  if (N != static_cast<size_t>(Enum::kLast)) return false;
  for (size_t i = 0; i < N; ++i)
    if (static_cast<size_t>(table[i].*key) != i + 1) return false;
  return true;
}

struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_size;    // sizeof(FileHeader) of the writer
  uint64_t file_size;      // total bytes, header to end section inclusive
  uint32_t section_count;  // including kEnd
  uint32_t flags;
  uint32_t header_crc;  // CRC-32 of this header with header_crc = 0
  uint32_t reserved;
};
static_assert(sizeof(FileHeader) == 40);

struct SectionHeader {
  uint32_t type;  // SectionType
  uint32_t record_size;
  uint64_t record_count;
  uint64_t payload_size;  // == record_size * record_count (kStrings: record_size 1)
  uint32_t payload_crc;   // CRC-32 of the payload bytes
  uint32_t reserved;
};
static_assert(sizeof(SectionHeader) == 32);

struct StringRef {
  uint32_t offset;
  uint32_t length;
};

struct HistogramRef {  // a run of HistogramBin records in the kHistograms section
  uint32_t first;
  uint32_t count;
};

struct HistogramBin {  // sparse: only non-empty buckets are written
  uint32_t bucket;     // index into LogHistogram buckets (log_histogram.h)
  uint32_t reserved;
  uint64_t count;
};
static_assert(sizeof(HistogramBin) == 16);

enum class ClockSource : uint32_t { kTsc = 1, kMonotonic = 2 };

enum class ExitPath : uint32_t {
  kExit = 1,            // exit() / return from main: library destructor
  kUnderscoreExit = 2,  // _exit() / _Exit()
  kExec = 3,            // the image was replaced by execve(); a new file follows for the same pid
  kSignal = 4,          // a signal whose default action ends the process; exit_status = its number
  kQuickExit = 5,       // quick_exit(), after the at_quick_exit handlers
  kSnapshot = 6,  // a periodic snapshot (--snapshot-interval) of a process still running; a file
                  // still saying so was never replaced: the process ended without an exit path
                  // (SIGKILL), and what it did after the snapshot is missing
};

struct ProcessRecord {
  uint32_t pid;
  uint32_t ppid;
  uint64_t start_realtime_ns;    // CLOCK_REALTIME at runtime start
  uint64_t duration_ns;          // runtime start to file write
  double ticks_per_second;       // TSC (or monotonic ns) frequency used for every time below
  uint32_t clock_source;         // ClockSource
  uint32_t hold_sample_period;   // 1 = every uncontended hold timed; N = 1 in N
  uint32_t exit_path;            // ExitPath
  int32_t exit_status;           // argument of exit/_exit when known, else -1
  StringRef executable;          // /proc/self/exe
  StringRef command_line;        // argv, NUL-separated
  uint32_t parent_was_profiled;  // 1 when created by fork() of a profiled process
  uint32_t exec_target;  // ended by exec: offset + 1 in the strings section of the exec'd path as
                         // the program named it (NUL-terminated); from version 4 two more strings
                         // follow it: the file a PATH search found ("" if none) and why the
                         // runtime will not be loaded into it ("" when it will); 0 = none
};
static_assert(sizeof(ProcessRecord) == 72);

struct ModuleRecord {
  uint64_t load_bias;  // dlpi_addr: runtime address = bias + ELF virtual address
  uint64_t start;      // lowest mapped address of its PT_LOAD segments
  uint64_t end;        // one past the highest
  StringRef path;
  uint32_t build_id_size;
  uint8_t build_id[20];
};
static_assert(sizeof(ModuleRecord) == 56);

enum class MutexKind : uint32_t {
  kUnknown = 0,  // statically initialised or first seen in use: type not observed
  kNormal = 1,
  kRecursive = 2,
  kErrorCheck = 3,
  kAdaptive = 4,
};

enum LockFlags : uint32_t {
  kLockDestroyed = 1u << 0,  // pthread_mutex_destroy seen for this generation
  kLockInitSeen = 1u << 1,   // pthread_mutex_init seen (init site valid)
  kLockProcessShared = 1u << 2,
  kLockRobust = 1u << 3,
  kLockPriorityInherit = 1u << 4,
  kLockPriorityProtect = 1u << 5,
  kLockOwnerDied = 1u << 6,  // a robust mutex acquired with EOWNERDEAD: its owner died holding it
  // No init seen: LockRecord's init site is the call site of the generation's first use (the
  // first acquire or wait), what names a heap or stack lock (every std::mutex) in a report.
  kLockFirstUseSite = 1u << 7,
};

struct LockRecord {
  uint64_t address;
  uint32_t generation;  // +1 at destroy, and at an init of an address acquired since the last one
  uint32_t primitive;   // Primitive
  uint32_t kind;        // MutexKind
  uint32_t flags;       // LockFlags
  uint32_t init_module;
  uint32_t capacity;  // barrier: its count; semaphore: initial value when seen at sem_init
  uint64_t init_offset;
  uint64_t owner_changes;  // acquisitions by a thread other than the previous owner
};
static_assert(sizeof(LockRecord) == 48);

struct SiteRecord {     // one (lock generation, call site, operation), summed over threads
  uint32_t lock_index;  // into the kLocks section
  uint16_t operation;   // Operation
  uint16_t reserved0;
  uint32_t module;          // into kModules, or kNoModule
  uint32_t hold_error_ppm;  // 95 % bound of hold_sum_ns's sampling error, in millionths of it
                            // (0: exact; older files: 0)
  uint64_t offset;          // return address - load bias (ELF vaddr); absolute if kNoModule
  uint64_t count;           // calls, failed ones included (acquisitions = count - failed)
  uint64_t contended;       // acquisitions that had to wait (trylock-first failed)
  uint64_t failed;          // trylock EBUSY, timed lock ETIMEDOUT, other errors
  uint64_t wait_sum_ns;
  uint64_t wait_max_ns;
  uint64_t hold_sum_ns;  // exact holds + the estimate of the sampled ones (see hold_error_ppm)
  uint64_t hold_max_ns;
  uint64_t hold_samples;  // holds that were timed
  HistogramRef wait_histogram;
  HistogramRef hold_histogram;
  // Operation-specific (0 elsewhere):
  uint64_t behind_readers;   // rwlock acquire: waits that began while readers held it
  uint64_t behind_writer;    // rwlock acquire: waits that began while a writer held it
  uint64_t with_waiters;     // signal/broadcast sent while lockscope saw a thread waiting
  uint64_t without_waiters;  // ... and while none was (a signal that woke nobody)
  uint64_t arrived_last;     // barrier wait: arrivals that completed the barrier (did not wait)
};
static_assert(sizeof(SiteRecord) == 144);

// A lock taken with a blocking call while another was this thread's innermost held lock, once per
// (held lock, acquired lock) generation pair: the first thread and call sites that did so.
struct LockOrderRecord {
  uint32_t from_lock;    // the held lock, into kLocks
  uint32_t to_lock;      // the lock acquired while holding it
  uint32_t from_module;  // where the held lock was acquired (kNoModule with offset 0: unknown)
  uint32_t to_module;    // where the other was acquired
  uint64_t from_offset;
  uint64_t to_offset;
  uint32_t tid;
  uint16_t to_operation;    // Operation
  uint16_t from_operation;  // how the held lock was acquired (0: not known)
};
static_assert(sizeof(LockOrderRecord) == 40);

// Contended acquisitions at one site (kSites record) that waited behind holds taken at one holder
// site: the holder that released the lock to the waiter. Holder site unknown (module kNoModule,
// offset 0): the lock's first wait (its holder had not named its site), or behind readers.
struct BlameRecord {
  uint32_t site;           // index into kSites: the waiting site
  uint32_t holder_module;  // into kModules, or kNoModule
  uint64_t holder_offset;  // the holder's acquire site
  uint64_t waits;
  uint64_t wait_ns;
};
static_assert(sizeof(BlameRecord) == 32);

// The call stacks of one kBlame record's waits (written only for a record with at least one):
// the stack they waited from, and the stack of the hold they waited behind: that hold's
// acquisition stack when it was a contended acquisition that captured one
// (kBlameHolderStackAtAcquire; innermost frame: the holder's acquire site), else the holder's
// stack at its release (innermost frame: the release's call site). kNoStack: not captured.
inline constexpr uint32_t kNoStack = 0xFFFFFFFFu;
inline constexpr uint32_t kBlameHolderStackAtAcquire = 1;
struct BlameStackRecord {
  uint32_t blame;         // into kBlame
  uint32_t waiter_stack;  // into kStacks, or kNoStack
  uint32_t holder_stack;  // into kStacks, or kNoStack
  uint32_t flags;         // kBlameHolderStackAtAcquire
};
static_assert(sizeof(BlameStackRecord) == 16);

// A site's contended acquisitions whose lock came from a release on another CPU or the same one
// (the rest of its contended acquisitions: not known, e.g. the lock's first wait). Sites with
// neither are not written.
struct CpuHandoffRecord {
  uint32_t site;  // index into kSites
  uint32_t reserved;
  uint64_t cross_cpu;
  uint64_t same_cpu;
};
static_assert(sizeof(CpuHandoffRecord) == 24);

// A frame of a call stack: a return address (innermost frame: the call site itself).
struct StackFrameRecord {
  uint32_t module;  // into kModules, or kNoModule
  uint32_t reserved;
  uint64_t offset;  // return address - load bias (absolute if kNoModule)
};
static_assert(sizeof(StackFrameRecord) == 16);

// The deepest stack the runtime keeps (its StackStore::kMaxDepth is this): a StackRecord of more
// frames is damage, and readers refuse it.
inline constexpr uint32_t kMaxStackFrames = 128;

struct StackRecord {  // a run of kStackFrames records, innermost first
  uint32_t first_frame;
  uint32_t frame_count;  // at most kMaxStackFrames
};
static_assert(sizeof(StackRecord) == 8);

// A site's contended acquisitions that waited from one call stack (those whose stack was
// captured: stack capture spends at most 1 % of a thread's time).
struct SiteStackRecord {
  uint32_t site;   // into kSites
  uint32_t stack;  // into kStacks
  uint64_t waits;
  uint64_t wait_ns;
};
static_assert(sizeof(SiteStackRecord) == 24);
// kSiteHoldStacks: the same record for an acquire site's timed holds by the call stack of their
// release (those whose stack was captured): `waits` the holds they stand for (a sampled hold
// counts for the holds it samples), `wait_ns` their hold time, weighted likewise (an estimate when
// the site's holds were sampled).
using SiteHoldStackRecord = SiteStackRecord;
// kSiteAcquireStacks (--stacks all): the same record for an acquire site's acquisitions by call
// stack: `waits` the acquisitions, `wait_ns` 0.
using SiteAcquireStackRecord = SiteStackRecord;

// The call stack a lock-order edge's nested acquisition was made from, captured when the edge was
// first seen (within the thread's stack-capture budget; edges without one have no record).
struct OrderStackRecord {
  uint32_t edge;   // into kLockOrder
  uint32_t stack;  // into kStacks
};
static_assert(sizeof(OrderStackRecord) == 8);

struct ThreadRecord {
  uint32_t tid;
  uint32_t flags;  // ThreadFlags
  char name[16];
  uint64_t acquisitions;
  uint64_t releases;
  uint64_t contended;
  uint64_t failed;
  uint64_t wait_sum_ns;  // lock waits: mutex, rwlock, condvar re-acquire (not spinning)
  uint64_t wait_max_ns;
  HistogramRef wait_histogram;                     // of the lock waits
  uint64_t wait_ns_by_primitive[kPrimitiveSlots];  // every kind of wait, never summed together
  uint64_t barrier_last_arrivals;  // barrier waits this thread completed as the last to arrive
};
static_assert(sizeof(ThreadRecord) == 152);

enum ThreadFlags : uint32_t {
  kThreadMain = 1u << 0,
  kThreadExited = 1u << 1,  // finished before the file was written
};

// kThreadFacts: what the runtime knows of a thread besides its lock calls, one record per kThreads
// record at most (a thread without one: none of it known). Its own section, not fields of
// ThreadRecord, so that files of version 4 without it still read (and readers before it skip it).
enum ThreadFactFlags : uint32_t {
  kThreadLifetimeKnown = 1u << 0,  // start_ns, end_ns
  kThreadCpuKnown = 1u << 1,       // cpu_ns
  kThreadSchedKnown = 1u << 2,     // sched_policy, sched_priority
};
struct ThreadFactsRecord {
  uint32_t thread;  // index into kThreads
  uint32_t known;   // ThreadFactFlags
  // ns since the runtime started in this image (ProcessRecord::start_realtime_ns): the thread's
  // registration (its first interposed call; the main thread: 0, it ran from the start), and its
  // exit (its pthread key destructor), 0 when it still ran when the file was written.
  uint64_t start_ns;
  uint64_t end_ns;
  // CPU time it used (CLOCK_THREAD_CPUTIME_ID): read by the thread at its exit, or by the writer
  // for a thread still running.
  uint64_t cpu_ns;
  int32_t sched_policy;    // SCHED_OTHER 0, SCHED_FIFO 1, SCHED_RR 2, SCHED_BATCH 3, SCHED_IDLE 5,
                           // SCHED_DEADLINE 6 (Linux's numbers), as last seen: at registration, at
                           // exit, or at the write for a thread still running
  int32_t sched_priority;  // its sched_param.sched_priority (0 for the non-real-time policies)
};
static_assert(sizeof(ThreadFactsRecord) == 40);

// kProcessFacts: exactly one record.
struct ProcessFactsRecord {
  uint32_t online_cpus;  // CPUs it could run on at runtime start (sched_getaffinity's count, or
                         // the online CPUs when that fails); 0: not known
  uint32_t reserved;
};
static_assert(sizeof(ProcessFactsRecord) == 8);

enum class Counter : uint32_t {
  kDroppedSites = 1,       // events not recorded: a site table was full (hot path or merge)
  kDroppedLocks = 2,       // lock table full
  kUnbalancedUnlocks = 3,  // unlock of a lock this thread was not seen to hold
  kHeldStackOverflow = 4,  // more nested locks than the held-lock stack tracks: hold not timed
  kReentrantCalls = 5,     // calls made from inside lockscope itself: passed through unrecorded
  kBootstrapCalls = 6,     // calls before the real functions were resolved
  kThreadsSeen = 7,
  kThreadsLiveAtExit = 8,  // their latest counts may be incomplete
  kDroppedThreads = 9,     // thread table full: that thread's calls are passed through unrecorded
  kWaitsInProgress = 10,   // threads blocked when the file was written: their waits counted so far
  kHoldsInProgress = 11,   // locks held when the file was written: timed ones counted so far
  kCallsAfterSnapshot = 12,    // calls of still-running threads while the file was being assembled:
                               // not in it
  kBlockingHoldsUntimed = 13,  // locks first waited for: the hold waited for then began before
                               // clock reads were due, so it may be untimed (then estimated)
  kDroppedOrderEdges = 14,     // lock-order edges not kept (memory refused)
  kTraceFilesFailed = 15,      // threads whose trace file could not be made: their events are not
                               // in the trace (they are in the tables)
  kThreadsNotPaused = 16,      // running threads the writer could not stop at a call boundary for
                               // its snapshot: each may be one call off (in flight then)
  kCallsBeforeRegistration = 17,  // calls of threads not yet registered, whose first call found
                                  // the runtime's lock held for over a second: passed through
                                  // unrecorded; they try again every 10 ms
  // New counters go here and move kLast; the reports' description of each counter
  // (report/counter_descriptions.h) then fails to compile until it describes it.
  kLast = kCallsBeforeRegistration,
};
inline constexpr uint32_t kCounterSlots = 32;  // ids 0..kLast: Runtime::counters, the writer's copy
static_assert(static_cast<uint32_t>(Counter::kLast) < kCounterSlots,
              "a counter beyond kCounterSlots needs bigger counter arrays (a format change)");

struct CounterRecord {
  uint32_t id;  // Counter
  uint32_t reserved;
  uint64_t value;
};
static_assert(sizeof(CounterRecord) == 16);

}  // namespace lockscope::format
