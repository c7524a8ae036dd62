// src/common/runtime_config.h is the one source of the runtime's config keys and defaults: the
// CLI's launch settings and the runtime's own start with its values, and the config string the
// CLI writes parses back into them (tests/integration/runtime_config_test.cpp checks --help and
// a runtime preloaded without the CLI).
#include "common/runtime_config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "cli/target_launch.h"
#include "common/config_string.h"
#include "runtime/trace_writer.h"

namespace lockscope {
namespace {

TEST(RuntimeConfig, LaunchSettingsStartWithTheSharedDefaults) {
  const LaunchSettings launch;
  EXPECT_EQ(launch.hold_sample_period, config::kDefaultHoldSamplePeriod);
  EXPECT_EQ(launch.hold_sample_period, 32u) << "bench/overhead measured the cost at 1 in 32";
  EXPECT_EQ(launch.snapshot_interval_ms, config::kDefaultSnapshotMs);
  EXPECT_EQ(launch.stack_depth, config::kDefaultStackDepth);
  EXPECT_EQ(launch.unwind, config::kUnwindNames[config::kDefaultUnwind]);
  EXPECT_EQ(launch.unwind, "auto");
  EXPECT_FALSE(launch.all_stacks) << "the default is " << config::kDefaultStacks;
  EXPECT_FALSE(launch.trace);
  EXPECT_EQ(launch.trace_size, config::kDefaultTraceSize);
  EXPECT_FALSE(launch.trace_ring) << "the default is " << config::kDefaultTraceFull;
  EXPECT_EQ(launch.min_wait_ns, config::kDefaultMinWaitNs);
}

TEST(RuntimeConfig, TheRuntimesTraceFilesHoldTheDefaultSize) {
  const runtime::TraceSettings trace;
  // A 256th for the keys (24 bytes each, to a page), the rest for 8-byte slots: the file is the
  // size.
  EXPECT_EQ(trace.layout.keys, 32768u);
  EXPECT_EQ(trace.layout.slots, (config::kDefaultTraceSize - 4096 - 32768 * 24) / 8);
  EXPECT_EQ(trace.layout.slots, 949760u);
  EXPECT_EQ(trace.min_wait_ns, config::kDefaultMinWaitNs);
  // Small files: 64 keys (a page) and the rest, 64 slots at least.
  EXPECT_EQ(runtime::trace_layout_for(3 * 4096).keys, 64u);
  EXPECT_EQ(runtime::trace_layout_for(3 * 4096).slots, 512u);
  EXPECT_EQ(runtime::trace_layout_for(config::kMinTraceSize).slots, 64u);
  EXPECT_EQ(runtime::trace_layout_for(0).slots, 64u);
  // Large ones: no more keys than a slot can number.
  EXPECT_EQ(runtime::trace_layout_for(config::kMaxTraceSize).keys, format::kTraceMaxKeys);
}

TEST(RuntimeConfig, EveryKeyIsDistinctAndDirectoryTakesTheRest) {
  const char* keys[] = {config::kHoldSampleKey, config::kSnapshotKey,  config::kStackDepthKey,
                        config::kUnwindKey,     config::kStacksKey,    config::kTraceKey,
                        config::kTraceSizeKey,  config::kTraceRingKey, config::kMinWaitKey,
                        config::kTscHzKey,      config::kLogWritesKey, config::kParentKey};
  std::string text;
  for (const char* key : keys) text += std::string(key) + "=" + key + ",";
  text += std::string(config::kDirectoryKey) + "=/a,b=c";
  std::map<std::string, std::string> seen;
  EXPECT_TRUE(
      ConfigString::for_each(text.c_str(), [&](const char* k, size_t kl, const char* v, size_t vl) {
        seen[std::string(k, kl)] = std::string(v, vl);
        return true;
      }));
  EXPECT_EQ(seen.size(), std::size(keys) + 1);
  EXPECT_EQ(seen[config::kHoldSampleKey], config::kHoldSampleKey);
  EXPECT_EQ(seen[config::kDirectoryKey], "/a,b=c") << "dir is last and takes the rest";
}

}  // namespace
}  // namespace lockscope
