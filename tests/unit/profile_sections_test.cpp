// The section table (common/profile_sections.h) against what the reader does: a file with every
// section of the table reads; without a section the table calls required it is refused, naming
// the section; without an optional one it still reads; a section of the wrong record size is
// refused, naming it and the table's size. A required flag that no decoder enforces, or a
// decoder that demands a section the table calls optional, fails here.
#include "common/profile_sections.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>

#include "analysis/profile_reader.h"
#include "common/crc32.h"

namespace lockscope {
namespace {

using namespace format;

// A file holding every section of the table, in table order (as the runtime writes them): one
// process record whose executable is the strings section's one byte, every other section empty.
// `skip`: a section type left out; `wider`: one whose record size is 8 bytes more (no records).
std::string file_of_every_section(uint32_t skip = 0, uint32_t wider = 0) {
  ProcessRecord process{};
  process.ticks_per_second = 1e9;
  process.executable = StringRef{0, 1};
  std::string body;
  uint32_t sections = 0;
  auto add = [&](uint32_t type, uint32_t record_size, const std::string& payload) {
    const SectionHeader header{type,
                               record_size,
                               record_size ? payload.size() / record_size : 0,
                               payload.size(),
                               crc32(0, payload.data(), payload.size()),
                               0};
    body.append(reinterpret_cast<const char*>(&header), sizeof(header));
    body += payload;
    ++sections;
  };
  for (const SectionSpec& spec : kSectionSpecs) {
    const auto type = static_cast<uint32_t>(spec.type);
    if (type == skip) continue;
    std::string payload;
    if (type == wider) {
      add(type, spec.record_size + 8, payload);
      continue;
    }
    if (spec.type == SectionType::kStrings) payload = "x";
    if (spec.type == SectionType::kProcess)
      payload.assign(reinterpret_cast<const char*>(&process), sizeof(process));
    add(type, spec.record_size, payload);
  }
  add(static_cast<uint32_t>(kEndSectionSpec.type), kEndSectionSpec.record_size, "");
  FileHeader header{};
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.version = kVersion;
  header.header_size = sizeof(FileHeader);
  header.file_size = sizeof(FileHeader) + body.size();
  header.section_count = sections;
  header.header_crc = crc32(0, &header, sizeof(header));
  return std::string(reinterpret_cast<const char*>(&header), sizeof(header)) + body;
}

std::variant<ProcessProfile, std::string> read(const std::string& bytes) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("profile_sections_test_" + std::to_string(getpid()) + ".lsprof"))
                               .string();
  std::ofstream(path, std::ios::binary) << bytes;
  auto result = read_profile_file(path);
  std::filesystem::remove(path);
  return result;
}

TEST(ProfileSections, AFileOfEverySectionReads) {
  auto result = read(file_of_every_section());
  ASSERT_TRUE(std::holds_alternative<ProcessProfile>(result)) << std::get<std::string>(result);
  EXPECT_EQ(std::get<ProcessProfile>(result).executable, "x");
  EXPECT_EQ(std::get<ProcessProfile>(result).unknown_sections, 0u);
}

TEST(ProfileSections, EachRequiredSectionIsRequiredAndNoOtherIs) {
  for (const SectionSpec& spec : kSectionSpecs) {
    auto result = read(file_of_every_section(static_cast<uint32_t>(spec.type)));
    if (!spec.required) {
      EXPECT_TRUE(std::holds_alternative<ProcessProfile>(result))
          << spec.name << ": " << std::get<std::string>(result);
      continue;
    }
    ASSERT_TRUE(std::holds_alternative<std::string>(result)) << spec.name << " is required";
    // Every file refers to a string (its executable): that reference finds the strings missing.
    const std::string expected = spec.type == SectionType::kStrings
                                     ? "a string reference points outside the strings section"
                                     : std::string("missing section '") + spec.name + "'";
    EXPECT_EQ(std::get<std::string>(result), expected);
  }
}

TEST(ProfileSections, ARecordSizeOtherThanTheTablesIsRefusedByName) {
  for (const SectionSpec& spec : kSectionSpecs) {
    if (spec.type == SectionType::kStrings) continue;  // bytes, not records: never decoded as such
    auto result = read(file_of_every_section(0, static_cast<uint32_t>(spec.type)));
    ASSERT_TRUE(std::holds_alternative<std::string>(result)) << spec.name;
    EXPECT_EQ(std::get<std::string>(result),
              std::string("section '") + spec.name + "' has records of " +
                  std::to_string(spec.record_size + 8) + " bytes, expected " +
                  std::to_string(spec.record_size));
  }
}

}  // namespace
}  // namespace lockscope
