// What the fuzz targets share: an input as the files of a profile directory, and the fix-up that
// lets mutated profiles past the reader's checksums.
//
// An input is one profile file and the trace files of its threads, each as a chunk:
//   u32 size (little-endian) | size bytes
// the first chunk the .lsprof, the others .lstrace files. A chunk whose size runs past the end
// of the input (or an input too short for a size) is the rest of the input. make_seed.py builds
// such inputs from the files a real `lockscope record` wrote.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/crc32.h"
#include "common/profile_format.h"

namespace lockscope::fuzz {

struct InputFiles {
  std::string profile;
  std::vector<std::string> traces;
};

inline InputFiles split_input(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  InputFiles files;
  for (bool first = true; first || !rest.empty(); first = false) {
    uint32_t chunk = 0;
    std::string_view bytes = rest;
    if (rest.size() >= sizeof(chunk)) {
      std::memcpy(&chunk, rest.data(), sizeof(chunk));
      if (chunk <= rest.size() - sizeof(chunk)) bytes = rest.substr(sizeof(chunk), chunk);
    }
    rest = bytes.data() == rest.data() ? std::string_view() : rest.substr(sizeof(chunk) + chunk);
    if (first)
      files.profile = std::string(bytes);
    else if (files.traces.size() < 64)
      files.traces.emplace_back(bytes);
  }
  return files;
}

// Makes every checksum and size of `file` agree with its bytes, as the runtime's writer would
// have written them: each section's record count and payload size (cut to what is left of the
// file and to whole records), its CRC, the header's file size and CRC. The fuzzer's mutations of
// the records themselves then reach the decoder instead of failing the checksums. A file too
// short for a header is left as it is.
inline void fix_checksums(std::string& file) {
  using namespace format;
  if (file.size() < sizeof(FileHeader)) return;
  FileHeader header;
  std::memcpy(&header, file.data(), sizeof(header));
  size_t at = sizeof(FileHeader);
  for (uint32_t i = 0; i < header.section_count && at + sizeof(SectionHeader) <= file.size(); ++i) {
    SectionHeader section;
    std::memcpy(&section, file.data() + at, sizeof(section));
    const size_t payload_at = at + sizeof(section);
    uint64_t size = std::min<uint64_t>(section.payload_size, file.size() - payload_at);
    if (section.type == static_cast<uint32_t>(SectionType::kEnd)) {
      size = 0;
      section.record_size = 0;
      section.record_count = 0;
    } else {
      if (section.record_size == 0) section.record_size = 1;
      size -= size % section.record_size;
      section.record_count = size / section.record_size;
    }
    section.payload_size = size;
    section.payload_crc = crc32(0, file.data() + payload_at, size);
    std::memcpy(file.data() + at, &section, sizeof(section));
    at = payload_at + size;
  }
  header.file_size = file.size();
  header.header_crc = 0;
  header.header_crc = crc32(0, &header, sizeof(header));
  std::memcpy(file.data(), &header, sizeof(header));
}

// A directory of this process's own, emptied and rewritten for each input.
class ScratchDirectory {
 public:
  ScratchDirectory()
      : path_(std::filesystem::temp_directory_path() /
              ("lockscope-fuzz-" + std::to_string(getpid()))) {
    std::filesystem::create_directories(path_);
  }
  const std::filesystem::path& path() const { return path_; }
  // Writes the input's files as a profile directory holds them.
  void write(const InputFiles& files) {
    for (const auto& entry : std::filesystem::directory_iterator(path_))
      std::filesystem::remove(entry.path());
    std::ofstream(path_ / "p.lsprof", std::ios::binary) << files.profile;
    for (size_t i = 0; i < files.traces.size(); ++i)
      std::ofstream(path_ / ("p-" + std::to_string(i + 1) + ".lstrace"), std::ios::binary)
          << files.traces[i];
  }

 private:
  std::filesystem::path path_;
};

}  // namespace lockscope::fuzz
