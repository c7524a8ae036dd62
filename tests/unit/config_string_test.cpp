#include "common/config_string.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace lockscope {
namespace {

std::map<std::string, std::string> parse(const char* text, bool* ok = nullptr) {
  std::map<std::string, std::string> out;
  const bool result =
      ConfigString::for_each(text, [&](const char* k, size_t kl, const char* v, size_t vl) {
        out[std::string(k, kl)] = std::string(v, vl);
        return true;
      });
  if (ok) *ok = result;
  return out;
}

TEST(ConfigString, KeyValuePairsWithDirectoryLastTakingTheRest) {
  bool ok = false;
  const auto entries = parse("hold_sample=8,tsc_hz=2100000000,dir=/tmp/a,b=c", &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(entries.at("hold_sample"), "8");
  EXPECT_EQ(entries.at("tsc_hz"), "2100000000");
  EXPECT_EQ(entries.at("dir"), "/tmp/a,b=c");
  EXPECT_EQ(entries.size(), 3u);
}

TEST(ConfigString, MalformedEntryIsReported) {
  bool ok = true;
  parse("hold_sample=8,garbage", &ok);
  EXPECT_FALSE(ok);
  EXPECT_TRUE(parse("").empty());
}

TEST(ConfigString, UnsignedIntegersRejectJunkAndOverflow) {
  uint64_t value = 0;
  EXPECT_TRUE(ConfigString::parse_u64("18446744073709551615", 20, value));
  EXPECT_EQ(value, UINT64_MAX);
  EXPECT_FALSE(ConfigString::parse_u64("18446744073709551616", 20, value));
  EXPECT_FALSE(ConfigString::parse_u64("12a", 3, value));
  EXPECT_FALSE(ConfigString::parse_u64("", 0, value));
}

}  // namespace
}  // namespace lockscope
