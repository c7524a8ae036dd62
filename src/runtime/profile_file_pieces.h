// A profile file as the pieces it is written from: its header, then for each row of the section
// table (common/profile_sections.h), in order, that section's header and its payload where it
// already is (no copy of the whole profile into one buffer: megabytes of fresh memory, each page
// a fault, on a server's profile), then the end section. Written with writev.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/profile_sections.h"
#include "runtime/profile_section_buffers.h"

namespace lockscope::runtime {

struct Runtime;

struct FilePieces {
  static constexpr size_t kSections = format::kSectionTypes + 1;  // and kEnd
  format::FileHeader header{};
  format::SectionHeader section_headers[kSections];
  const unsigned char* payloads[kSections];
  uint32_t sections = 0;
  uint64_t size = sizeof(format::FileHeader);

  // Every section of the table from `out`, empty ones too, then kEnd; then the file header.
  void add_sections(SectionBuffers& out);

 private:
  void add(const format::SectionSpec& spec, ByteBuffer* payload);
};

// The whole file from its start, in one writev where it can (its header, then each section's
// header and payload: a write call apiece cost a short-lived process's exit 25 system calls);
// false (errno EFBIG) where the next write would start at the program's file size limit (the
// kernel would end the program with SIGXFSZ).
bool write_all(int fd, const FilePieces& file);

// The file into the process's kept profile file (Runtime::kept_profile_fd), from its start, when
// that descriptor still is that file.
bool write_kept_profile(Runtime& rt, const FilePieces& file);

}  // namespace lockscope::runtime
