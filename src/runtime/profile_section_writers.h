// The encoders of a profile's sections: each turns what the runtime recorded into its section's
// records (common/profile_sections.h says which record each section holds), in SectionBuffers.
// They run at the profile write only (exit, exec, snapshot), never on a lock call, and allocate
// nothing but those mmap'd buffers.
//
// Sections refer to each other by record number (a site to its lock, a blame record to its site,
// a stack row to its stack), and the strings and histograms sections are shared: write_profile
// (profile_writer.cpp) calls the encoders in the one order that keeps those numbers right.
#pragma once

#include <cstdint>

#include "common/profile_format.h"
#include "runtime/byte_buffer.h"
#include "runtime/profile_section_buffers.h"

namespace lockscope::runtime {

struct Runtime;
struct ModuleList;
class SiteTable;

// kProcess, with its strings (executable, command line, exec target), and kProcessFacts.
void encode_process(SectionBuffers& out, const Runtime& rt, format::ExitPath exit_path,
                    int exit_status);
void encode_process_facts(SectionBuffers& out, const Runtime& rt);
void encode_modules(SectionBuffers& out, const ModuleList& modules);

// kLocks and kSites, with what hangs off each site (kBlame, kBlameStacks, kSiteStacks,
// kSiteHoldStacks, kSiteAcquireStacks, kCpuHandoffs, and the sites' histograms), then
// kLockOrder and kOrderStacks, then every stack interned into `all` so far (kStacks and
// kStackFrames, last: the blame and order stacks join the sites'). Nothing when the lock index
// cannot be mapped.
void encode_lock_sections(SectionBuffers& out, Runtime& rt, const ModuleList& modules,
                          SiteTable& all);

// kThreads and kThreadFacts (and the threads' histograms): the threads `live` holds
// (snapshot_threads, profile_thread_snapshot.h), then those long gone. Returns how many of
// them still ran.
uint64_t encode_threads(SectionBuffers& out, Runtime& rt, ByteBuffer& live);

// kCounters: one record per counter id 1..Counter::kLast.
void encode_counters(SectionBuffers& out, const uint64_t (&values)[format::kCounterSlots]);

}  // namespace lockscope::runtime
