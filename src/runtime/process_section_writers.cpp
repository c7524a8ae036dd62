// The process's sections of the profile: the process record and its facts, the module map, the
// threads and their facts, the counters (profile_section_writers.h).
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "runtime/cancellation.h"
#include "runtime/module_map.h"
#include "runtime/open_at_descriptor_limit.h"
#include "runtime/own_proc_files.h"
#include "runtime/profile_section_writers.h"
#include "runtime/profile_thread_snapshot.h"
#include "runtime/runtime_state.h"

namespace lockscope::runtime {
namespace {

using format::SectionType;

size_t read_file(const char* path, char* buffer, size_t size) {
  NoCancellation no_cancellation;  // no cancellation point of ours (cancellation.h)
  const int fd = open_at_descriptor_limit(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t total = 0;
  while (total < size) {
    const ssize_t got = read(fd, buffer + total, size - total);
    if (got <= 0) break;
    total += static_cast<size_t>(got);
  }
  close(fd);
  return total;
}

// A thread's row and its facts' (only when the row was written: facts never name a missing row).
void add_thread(SectionBuffers& out, const format::ThreadRecord& record,
                format::ThreadFactsRecord facts) {
  facts.thread = out.count<SectionType::kThreads>();
  if (out.append<SectionType::kThreads>(record)) out.append<SectionType::kThreadFacts>(facts);
}

}  // namespace

void encode_process(SectionBuffers& out, const Runtime& rt, format::ExitPath exit_path,
                    int exit_status) {
  ByteBuffer scratch;
  format::ProcessRecord record{};
  record.pid = rt.pid;
  record.ppid = rt.ppid;
  record.start_realtime_ns = rt.start_realtime_ns;
  record.duration_ns = Clock::monotonic_ns() - rt.start_monotonic_ns;
  record.ticks_per_second = rt.clock.ticks_per_second;
  record.clock_source = static_cast<uint32_t>(rt.clock.use_tsc ? format::ClockSource::kTsc
                                                               : format::ClockSource::kMonotonic);
  record.hold_sample_period = rt.hold_sample_period;
  record.exit_path = static_cast<uint32_t>(exit_path);
  record.exit_status = exit_status;
  record.parent_was_profiled = rt.parent_was_profiled ? 1 : 0;
  if (exit_path == format::ExitPath::kExec && rt.exec_target_size > 0) {
    ByteBuffer& strings = out.payload<SectionType::kStrings>();
    record.exec_target = static_cast<uint32_t>(strings.size()) + 1;
    strings.append(rt.exec_target, rt.exec_target_size);
  }
  char exe[4096];
  const ssize_t exe_length = read_own_executable_path(exe, sizeof(exe));
  record.executable = out.add_string(exe, exe_length > 0 ? static_cast<size_t>(exe_length) : 0);
  if (scratch.reserve(1 << 20)) {
    char* text = reinterpret_cast<char*>(scratch.data());
    size_t length = read_file(kOwnCommandLine, text, 1 << 20);
    if (length == 0) length = read_file(kOwnCommandLineFallback, text, 1 << 20);
    record.command_line = out.add_string(text, length);
  }
  out.append<SectionType::kProcess>(record);
}

void encode_process_facts(SectionBuffers& out, const Runtime& rt) {
  out.append<SectionType::kProcessFacts>(format::ProcessFactsRecord{rt.online_cpus, 0});
}

void encode_modules(SectionBuffers& out, const ModuleList& list) {
  for (uint32_t i = 0; i < list.count; ++i) {
    const LoadedModule& m = list.modules[i];
    format::ModuleRecord record{};
    record.load_bias = m.load_bias;
    record.start = m.start;
    record.end = m.end;
    record.path = out.add_string(m.path, strlen(m.path));
    record.build_id_size = m.build_id_size;
    memcpy(record.build_id, m.build_id, sizeof(record.build_id));
    out.append<SectionType::kModules>(record);
  }
}

// Threads that still hold a slot (as snapshot), then those long gone.
uint64_t encode_threads(SectionBuffers& out, Runtime& rt, ByteBuffer& live) {
  uint64_t running = 0;
  auto* threads = reinterpret_cast<LiveThread*>(live.data());
  for (size_t i = 0; i < live.size() / sizeof(LiveThread); ++i) {
    LiveThread& thread = threads[i];
    if (!(thread.record.flags & format::kThreadExited)) ++running;
    thread.record.wait_histogram = out.add_histogram(rt.threads.slot(thread.slot).wait_histogram);
    if (thread.extra_wait_bucket >= 0)
      out.add_bin(thread.record.wait_histogram, thread.extra_wait_bucket, 1);
    add_thread(out, thread.record, thread.facts);
  }
  for (size_t i = 0; i < rt.threads.finished_count(); ++i) {
    format::ThreadRecord record = rt.threads.finished(i);
    format::HistogramRef ref = out.next_histogram();
    for (uint32_t b = 0; b < record.wait_histogram.count; ++b) {
      const format::HistogramBin& bin = rt.threads.finished_bin(record.wait_histogram.first + b);
      out.add_bin(ref, static_cast<int>(bin.bucket), bin.count);
    }
    record.wait_histogram = ref;
    add_thread(out, record, rt.threads.finished_facts(i));
  }
  return running;
}

void encode_counters(SectionBuffers& out, const uint64_t (&values)[format::kCounterSlots]) {
  constexpr uint32_t kLastCounter = static_cast<uint32_t>(format::Counter::kLast);
  for (uint32_t id = 1; id <= kLastCounter; ++id)
    out.append<SectionType::kCounters>(format::CounterRecord{id, 0, values[id]});
}

}  // namespace lockscope::runtime
