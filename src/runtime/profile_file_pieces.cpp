#include "runtime/profile_file_pieces.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/crc32.h"
#include "runtime/file_size_limit.h"
#include "runtime/runtime_state.h"

namespace lockscope::runtime {

void FilePieces::add(const format::SectionSpec& spec, ByteBuffer* payload) {
  const size_t record_size = spec.record_size;
  format::SectionHeader& section = section_headers[sections];
  section = format::SectionHeader{};
  section.type = static_cast<uint32_t>(spec.type);
  section.record_size = static_cast<uint32_t>(record_size);
  section.payload_size = payload ? payload->size() : 0;
  section.record_count = record_size ? section.payload_size / record_size : 0;
  section.payload_crc = crc32(0, payload ? payload->data() : nullptr, section.payload_size);
  payloads[sections] = payload ? payload->data() : nullptr;
  size += sizeof(format::SectionHeader) + section.payload_size;
  ++sections;
}

void FilePieces::add_sections(SectionBuffers& out) {
  for (const format::SectionSpec& spec : format::kSectionSpecs) add(spec, &out.payload(spec.type));
  add(format::kEndSectionSpec, nullptr);
  memcpy(header.magic, format::kMagic, sizeof(header.magic));
  header.version = format::kVersion;
  header.header_size = sizeof(header);
  header.file_size = size;
  header.section_count = sections;
  header.header_crc = crc32(0, &header, sizeof(format::FileHeader));
}

// that descriptor still is that file.
bool write_kept_profile(Runtime& rt, const FilePieces& file) {
  if (rt.kept_profile_fd < 0 || !rt.kept_profile.is(rt.kept_profile_fd)) {
    errno = EACCES;
    return false;
  }
  return lseek(rt.kept_profile_fd, 0, SEEK_SET) == 0 && ftruncate(rt.kept_profile_fd, 0) == 0 &&
         write_all(rt.kept_profile_fd, file);
}

bool write_all(int fd, const FilePieces& file) {
  iovec pieces[1 + 2 * FilePieces::kSections];
  int count = 0;
  auto add = [&](const void* data, size_t size) {
    if (size != 0) pieces[count++] = iovec{const_cast<void*>(data), size};
  };
  add(&file.header, sizeof(file.header));
  for (uint32_t i = 0; i < file.sections; ++i) {
    add(&file.section_headers[i], sizeof(format::SectionHeader));
    add(file.payloads[i], file.section_headers[i].payload_size);
  }
  const uint64_t limit = file_size_limit();
  uint64_t offset = 0;
  for (int first = 0; first < count;) {
    if (offset >= limit) {
      errno = EFBIG;
      return false;
    }
    ssize_t n = writev(fd, pieces + first, count - first);
    // A seccomp filter that allows write but refuses writev: one piece at a time.
    if (n < 0 && (errno == EPERM || errno == ENOSYS))
      n = write(fd, pieces[first].iov_base, pieces[first].iov_len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    offset += static_cast<uint64_t>(n);
    // Past what was written: whole pieces, then into the one it stopped in.
    for (auto left = static_cast<size_t>(n); left != 0;) {
      if (left >= pieces[first].iov_len) {
        left -= pieces[first++].iov_len;
      } else {
        pieces[first].iov_base = static_cast<unsigned char*>(pieces[first].iov_base) + left;
        pieces[first].iov_len -= left;
        left = 0;
      }
    }
  }
  return true;
}

}  // namespace lockscope::runtime
