// A trace buffer's own state changes (trace_writer.h); the file's making is trace_files.cpp's.
#include "runtime/trace_writer.h"

namespace lockscope::runtime {

void mark_trace_closed(TraceBuffer& buffer) {
  if (buffer.header) __atomic_store_n(&buffer.header->closed, 1u, __ATOMIC_RELEASE);
}

void close_trace(TraceBuffer& buffer) {
  mark_trace_closed(buffer);
  forget_trace(buffer);
}

void park_trace(TraceBuffer& buffer) {
  if (buffer.header == nullptr) return;
  buffer.parked = buffer.header;
  buffer.header = nullptr;
}

void unpark_trace(TraceBuffer& buffer) {
  if (buffer.parked == nullptr) return;
  buffer.header = buffer.parked;
  buffer.parked = nullptr;
}

}  // namespace lockscope::runtime
