#include "analysis/profile_section_set.h"

#include "common/crc32.h"

namespace lockscope::profile_decoding {

using format::SectionType;

void SectionSet::parse() {
  // Empty: a process that gave up root kept its file open from then on, to write at its end
  // (interpose_credentials.cpp), and ended without it.
  if (bytes_.empty())
    throw BadFile("empty: the process ended without writing its profile (killed by SIGKILL?)");
  if (bytes_.size() < sizeof(format::FileHeader))
    throw BadFile(fmt::format("truncated: {} bytes, shorter than the file header", bytes_.size()));
  format::FileHeader header;
  std::memcpy(&header, bytes_.data(), sizeof(header));
  if (std::memcmp(header.magic, format::kMagic, sizeof(header.magic)) != 0)
    throw BadFile("not a lockscope profile (bad magic)");
  if (header.version > format::kVersion)
    throw BadFile(
        fmt::format("written by a newer lockscope (format version {}; this one reads up "
                    "to {})",
                    header.version, format::kVersion));
  if (header.version < format::kOldestReadableVersion)
    throw BadFile(
        fmt::format("written by an older lockscope (format version {}; this one reads "
                    "versions {} to {}): record it again",
                    header.version, format::kOldestReadableVersion, format::kVersion));
  version_ = header.version;
  if (header.header_size != sizeof(format::FileHeader))
    throw BadFile(fmt::format("unsupported header size {}", header.header_size));
  const uint32_t stored_crc = header.header_crc;
  header.header_crc = 0;
  if (crc32(0, &header, sizeof(header)) != stored_crc)
    throw BadFile("corrupt file header (checksum mismatch)");
  if (header.file_size != bytes_.size())
    throw BadFile(
        header.file_size > bytes_.size()
            ? fmt::format("truncated: {} of {} bytes", bytes_.size(), header.file_size)
            : fmt::format("{} bytes, but its header says {}", bytes_.size(), header.file_size));
  size_t at = sizeof(format::FileHeader);
  bool ended = false;
  for (uint32_t i = 0; i < header.section_count && !ended; ++i) {
    if (at + sizeof(format::SectionHeader) > bytes_.size())
      throw BadFile(fmt::format("truncated in section {} of {}", i + 1, header.section_count));
    format::SectionHeader section;
    std::memcpy(&section, bytes_.data() + at, sizeof(section));
    at += sizeof(section);
    // A type this reader does not know (a newer lockscope's) is checked like any other, then
    // skipped and counted: a damaged known section fails its checksum or the missing-section
    // test instead.
    const bool is_end = section.type == static_cast<uint32_t>(SectionType::kEnd);
    const format::SectionSpec* spec =
        is_end ? &format::kEndSectionSpec : format::find_section_spec(section.type);
    const std::string name = spec ? spec->name : fmt::format("type {}", section.type);
    if (section.payload_size > bytes_.size() - at)
      throw BadFile(fmt::format("section '{}' runs past the end of the file", name));
    const auto* payload = reinterpret_cast<const unsigned char*>(bytes_.data() + at);
    if (crc32(0, payload, section.payload_size) != section.payload_crc)
      throw BadFile(fmt::format("section '{}' is corrupt (checksum mismatch)", name));
    if (is_end ? section.payload_size != 0 || section.record_size != 0 || section.record_count != 0
               : section.record_size == 0 || section.payload_size % section.record_size != 0 ||
                     section.record_count != section.payload_size / section.record_size)
      throw BadFile(fmt::format("section '{}' has inconsistent sizes", name));
    at += section.payload_size;
    if (is_end) {
      ended = true;
      continue;
    }
    if (!spec) {
      ++unknown_sections_;
      continue;
    }
    Section& known = sections_[section.type];
    if (known.present) throw BadFile(fmt::format("section '{}' appears twice", name));
    known = Section{true, section.record_size, payload, section.record_count};
  }
  if (!ended) throw BadFile("no end-of-profile section (incomplete file)");
  string_bytes_ = ReferenceBudget(strings().count, "string references");
}

std::vector<std::string> SectionSet::c_strings(uint32_t offset_plus_one, size_t count) const {
  std::vector<std::string> out;
  uint64_t at = offset_plus_one;
  const Section& section = strings();
  while (out.size() < count && section.present && at >= 1 && at <= section.count) {
    const char* begin = reinterpret_cast<const char*>(section.data) + at - 1;
    if (!std::memchr(begin, '\0', section.count - (at - 1))) break;
    out.push_back(c_string(static_cast<uint32_t>(at)));
    at += out.back().size() + 1;
  }
  return out;
}

std::string SectionSet::c_string(uint32_t offset_plus_one) const {
  const Section& section = strings();
  if (!section.present || offset_plus_one == 0 || offset_plus_one > section.count)
    throw BadFile("a string reference points outside the strings section");
  const char* begin = reinterpret_cast<const char*>(section.data) + offset_plus_one - 1;
  const char* end =
      static_cast<const char*>(std::memchr(begin, '\0', section.count - (offset_plus_one - 1)));
  if (!end) throw BadFile("a string runs past the end of the strings section");
  string_bytes_.take(static_cast<uint64_t>(end - begin) + 1);
  return std::string(begin, end);
}

std::string SectionSet::string(format::StringRef ref) const {
  const Section& section = strings();
  if (!section.present || uint64_t{ref.offset} + ref.length > section.count)
    throw BadFile("a string reference points outside the strings section");
  string_bytes_.take(ref.length);
  return std::string(reinterpret_cast<const char*>(section.data) + ref.offset, ref.length);
}

}  // namespace lockscope::profile_decoding
