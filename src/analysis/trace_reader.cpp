#include "analysis/trace_reader.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

#include "analysis/regular_file.h"
#include "analysis/trace_summary.h"

namespace lockscope {
namespace {

// Bytes read at `offset`, up to `size`: fewer only at the end of the file or on an error.
size_t read_at(const RegularFile& in, uint64_t offset, void* into, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t got = pread(in.fd(), static_cast<char*>(into) + done, size - done,
                              static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

void name_missing(TraceFile& out, uint64_t missing, uint64_t of, uint64_t file_size) {
  if (missing)
    out.thread.problem = fmt::format(
        "{} of its {} events are missing or damaged (file of {} "
        "bytes)",
        missing, of, file_size);
}

// The `kept` slots of `size` bytes a file's counters say it holds, at `offset`, in the order they
// were written; `missing` gets those the file does not have. Never more than the file holds: a
// damaged header may claim 2^40 events of a 6 KB file. A wrapped ring (its oldest slot at written
// % capacity) needs its whole file, else none of it is trusted.
template <typename Slot>
std::vector<Slot> read_slots(const RegularFile& in, const format::TraceHeader& header,
                             uint64_t offset, uint64_t file_size, uint64_t& missing) {
  const uint64_t kept = std::min(header.written, header.capacity);
  const uint64_t room = file_size > offset ? (file_size - offset) / sizeof(Slot) : 0;
  const bool wrapped = header.written > header.capacity;
  const uint64_t present = wrapped ? (room >= header.capacity ? kept : 0) : std::min(kept, room);
  std::vector<Slot> slots(present);
  const size_t wanted = slots.size() * sizeof(Slot);
  if (const size_t got = read_at(in, offset, slots.data(), wanted); got != wanted)
    // Shorter than its size said (it changed while read): what was read, in order, if unwrapped.
    slots.resize(wrapped ? 0 : got / sizeof(Slot));
  missing = kept - slots.size();
  if (wrapped && !slots.empty())
    std::rotate(slots.begin(), slots.begin() + header.written % header.capacity, slots.end());
  return slots;
}

bool known_kind(uint8_t kind) {
  return kind != 0 && kind <= static_cast<uint8_t>(format::TraceKind::kLast);
}

// Version 1: the events themselves.
void read_events_v1(const RegularFile& in, const format::TraceHeader& header, uint64_t file_size,
                    TraceFile& out) {
  uint64_t missing = 0;
  std::vector<format::TraceEvent> slots =
      read_slots<format::TraceEvent>(in, header, header.header_size, file_size, missing);
  out.thread.overwritten = header.written - std::min(header.written, header.capacity);
  out.events.reserve(slots.size());
  for (const format::TraceEvent& event : slots) {
    if (!known_kind(event.kind)) {
      ++missing;
      continue;
    }
    out.events.push_back(event);
  }
  name_missing(out, missing, std::min(header.written, header.capacity), file_size);
}

// Version 2: slots, decoded through the key table and the steps between their times.
void read_events_v2(const RegularFile& in, const format::TraceHeader& header, uint64_t file_size,
                    TraceFile& out) {
  // No more than the file has room for (a damaged header may claim 2^21 keys of a short file).
  const uint64_t key_room = file_size > header.keys_offset
                                ? (file_size - header.keys_offset) / sizeof(format::TraceKey)
                                : 0;
  std::vector<format::TraceKey> keys(
      std::min<uint64_t>({header.keys, header.key_capacity, key_room}));
  keys.resize(read_at(in, header.keys_offset, keys.data(), keys.size() * sizeof(format::TraceKey)) /
              sizeof(format::TraceKey));
  uint64_t missing = 0;
  const std::vector<uint64_t> slots =
      read_slots<uint64_t>(in, header, header.events_offset, file_size, missing);
  const uint64_t unread = missing;  // slots the file does not have (counted as events)
  const bool wrapped = header.written > header.capacity;
  // A ring's oldest slots were overwritten, and with them the time its steps count from: its
  // events before the first anchor have no time, and count as overwritten.
  bool timed = !wrapped;
  uint64_t base = header.start_ticks, in_file = 0, untimed = 0;
  out.events.reserve(slots.size());
  for (const uint64_t slot : slots) {
    const uint8_t kind = format::trace_slot_kind(slot);
    if (kind == format::kTraceAnchor) {
      base = format::trace_anchor_ticks(slot);
      timed = true;
      continue;
    }
    ++in_file;
    if (!known_kind(kind)) {
      ++missing;
      continue;
    }
    if (!timed) {
      ++untimed;
      continue;
    }
    base += static_cast<uint64_t>(int64_t{format::trace_slot_step(slot)});
    format::TraceEvent event{base, 0, 0, 0, 0, kind, format::trace_slot_flags(slot)};
    if (format::is_thread_event(static_cast<format::TraceKind>(kind))) {
      event.value = header.tid;
    } else {
      const uint32_t number = format::trace_slot_key(slot);
      if (number == 0 || number > keys.size()) {
        ++missing;
        continue;
      }
      const format::TraceKey& key = keys[number - 1];
      event.object = key.object;
      event.site = key.site;
      event.value = key.value;
      event.operation = key.operation;
    }
    out.events.push_back(event);
  }
  // Events ever written, less those the file holds (missing slots are counted as events).
  const uint64_t events = header.written - std::min(header.anchors, header.written);
  const uint64_t held = in_file + unread;
  out.thread.overwritten = (events > held ? events - held : 0) + untimed;
  name_missing(out, missing, out.events.size() + missing, file_size);
}

}  // namespace

std::variant<TraceFile, std::string> read_trace_file(const std::string& path) {
  RegularFile in;
  if (std::string problem = in.open(path); !problem.empty()) return problem;
  const uint64_t file_size = in.size();
  format::TraceHeader header{};
  if (file_size < format::kTraceHeaderV1Size ||
      read_at(in, 0, &header, std::min<uint64_t>(sizeof(header), file_size)) <
          format::kTraceHeaderV1Size)
    return fmt::format("truncated: {} bytes, shorter than the trace header", file_size);
  if (std::memcmp(header.magic, format::kTraceMagic, sizeof(header.magic)) != 0)
    return "not a lockscope trace (bad magic)";
  if (header.version != format::kTraceVersion && header.version != format::kTraceVersion1)
    return fmt::format("trace format version {}; this lockscope reads versions 1 and {}",
                       header.version, format::kTraceVersion);
  const bool v1 = header.version == format::kTraceVersion1;
  if (!v1 && file_size < sizeof(header))
    return fmt::format("truncated: {} bytes, shorter than the trace header", file_size);
  const bool layout_ok =
      v1 ? header.event_size == sizeof(format::TraceEvent) &&
               header.header_size >= format::kTraceHeaderV1Size
         : header.event_size == sizeof(uint64_t) && header.key_size == sizeof(format::TraceKey) &&
               header.header_size >= sizeof(format::TraceHeader) &&
               header.keys_offset >= header.header_size &&
               header.keys_offset <= (uint64_t{1} << 40) && header.key_capacity > 0 &&
               header.key_capacity <= format::kTraceMaxKeys &&
               header.events_offset >=
                   header.keys_offset + uint64_t{header.key_capacity} * sizeof(format::TraceKey) &&
               header.events_offset <= (uint64_t{1} << 40) && header.keys <= header.key_capacity;
  if (!layout_ok || header.header_size > file_size || header.capacity == 0 ||
      header.capacity > (uint64_t{1} << 40) || !(header.ticks_per_second >= 1000) ||
      header.ns_per_tick_q32 == 0 ||
      (header.written > header.capacity && !(header.flags & format::kTraceRing)))
    return "corrupt trace header";
  TraceFile out;
  out.pid = header.pid;
  out.process_start_realtime_ns = header.process_start_realtime_ns;
  out.process_start_ticks = header.process_start_ticks;
  out.ticks_per_second = header.ticks_per_second;
  out.ns_per_tick_q32 = header.ns_per_tick_q32;
  out.min_wait_ticks = header.min_wait_ticks;
  out.ring = header.flags & format::kTraceRing;
  out.thread.tid = header.tid;
  out.thread.file = path;
  out.thread.dropped = header.dropped;
  if (!v1) out.thread.dropped_no_key = std::min(header.dropped_no_key, header.dropped);
  out.thread.filtered = header.filtered;
  out.thread.closed = header.closed != 0;
  try {
    if (v1)
      read_events_v1(in, header, file_size, out);
    else
      read_events_v2(in, header, file_size, out);
  } catch (const std::bad_alloc&) {  // a sparse file claiming more events than memory holds
    return fmt::format("unreadable: {} bytes of events do not fit in memory", file_size);
  }
  out.thread.events = out.events.size();
  return out;
}

CodeLocation location_of_address(const ProcessProfile& process, uint64_t address) {
  CodeLocation location;
  location.offset = address;
  for (size_t i = 0; i < process.modules.size(); ++i) {
    const ModuleSummary& module = process.modules[i];
    if (address >= module.start && address < module.end) {
      location.module = static_cast<uint32_t>(i);
      location.offset = address - module.load_bias;
      break;
    }
  }
  return location;
}

namespace {

void add_file(ProcessProfile& process, TraceFile&& file, std::map<uint64_t, size_t>& site_index) {
  ProcessTrace& trace = process.trace;
  trace.present = true;
  trace.ring = trace.ring || file.ring;
  trace.min_wait_ns = static_cast<uint64_t>(
      static_cast<double>(file.min_wait_ticks) * 1e9 / file.ticks_per_second + 0.5);
  trace.ns_per_tick_q32 = file.ns_per_tick_q32;
  for (const format::TraceEvent& event : file.events) {
    TraceRecord record;
    record.ticks = event.ticks;
    // A tick before the start (the clock read just before it was taken) is time 0.
    record.time_ns = event.ticks > file.process_start_ticks
                         ? trace.ticks_to_ns(event.ticks - file.process_start_ticks)
                         : 0;
    record.tid = file.thread.tid;
    record.kind = static_cast<format::TraceKind>(event.kind);
    record.operation = static_cast<format::Operation>(event.operation);
    record.flags = event.flags;
    if (record.kind == format::TraceKind::kThreadName) {
      char name[17] = {};
      std::memcpy(name, &event.site, 8);
      std::memcpy(name + 8, &event.object, 8);
      record.name = name;
    } else {
      record.object = event.object;
      record.generation = event.value;
      auto [at, added] = site_index.try_emplace(event.site, trace.sites.size());
      if (added) trace.sites.push_back(location_of_address(process, event.site));
      record.site = at->second;
    }
    trace.events.push_back(std::move(record));
  }
  trace.threads.push_back(std::move(file.thread));
}

}  // namespace

void attach_traces(Profile& profile, const std::string& directory) {
  namespace fs = std::filesystem;
  std::error_code error;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(directory, error))
    if (entry.path().extension() == format::kTraceSuffix) files.push_back(entry.path());
  if (files.empty()) return;
  // Numbered in the order each image opened them: by name length, then name.
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    const std::string x = a.filename().string(), y = b.filename().string();
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  std::map<std::pair<uint32_t, uint64_t>, ProcessProfile*> processes;
  for (ProcessProfile& process : profile.processes)
    processes[{process.pid, process.start_realtime_ns}] = &process;
  std::map<ProcessProfile*, std::map<uint64_t, size_t>> site_indexes;
  for (const fs::path& path : files) {
    auto result = read_trace_file(path.string());
    if (auto* problem = std::get_if<std::string>(&result)) {
      profile.problems.push_back(ProfileProblem{path.string(), *problem});
      continue;
    }
    TraceFile& file = std::get<TraceFile>(result);
    auto it = processes.find({file.pid, file.process_start_realtime_ns});
    if (it == processes.end()) {
      // An image that ended (exec) before it recorded a call writes no profile: nothing is lost.
      const bool only_thread_events =
          std::none_of(file.events.begin(), file.events.end(), [](const format::TraceEvent& event) {
            return format::is_call_event(static_cast<format::TraceKind>(event.kind));
          });
      if (only_thread_events && file.thread.dropped == 0 && file.thread.filtered == 0) continue;
      profile.problems.push_back(ProfileProblem{
          path.string(), fmt::format("trace of pid {} whose profile file is missing (the process "
                                     "was killed before its trace began?)",
                                     file.pid)});
      continue;
    }
    add_file(*it->second, std::move(file), site_indexes[it->second]);
  }
  for (ProcessProfile& process : profile.processes) {
    if (!process.trace.present) continue;
    if (process.exit_path == format::ExitPath::kSnapshot) {
      process.trace.cut_short = true;
      const bool complete =
          process.trace.min_wait_ns == 0 && process.trace.lost() == 0 &&
          process.counter(format::Counter::kTraceFilesFailed) == 0 &&
          std::all_of(process.trace.threads.begin(), process.trace.threads.end(),
                      [](const TraceThread& thread) { return thread.problem.empty(); });
      if (complete) {
        rebuild_from_trace(process);
        process.trace.rebuilt = true;
      }
    }
  }
  // Trace mode writes a snapshot as each image starts. An image that then exec'd, or was killed,
  // before its first call leaves that snapshot and thread events only: as in summary mode, where
  // such an image writes nothing, it is not a process of the report.
  std::erase_if(profile.processes, [](const ProcessProfile& process) {
    return process.trace.rebuilt && process.locks.empty() &&
           std::none_of(process.trace.events.begin(), process.trace.events.end(),
                        [](const TraceRecord& event) { return format::is_call_event(event.kind); });
  });
}

}  // namespace lockscope
