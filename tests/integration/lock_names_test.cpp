// Lock names on a real run: each lock of the lock_names fixture is named as a person finds it in
// the source (its symbol, its init call's line, its first use's line), in summary and trace mode.
#include "analysis/lock_names.h"

#include <gtest/gtest.h>

#include <string>

#include "lockscope_harness.h"

namespace lockscope::testing {
namespace {

const LockSummary* lock_named(const ProcessProfile& process, const std::string& name) {
  for (const LockSummary& lock : process.locks)
    if (lock.name == name) return &lock;
  return nullptr;
}

std::string names_of(const ProcessProfile& process) {
  std::string text;
  for (const LockSummary& lock : process.locks) text += "\n  " + lock_name_phrase(lock);
  return text;
}

class LockNames : public ::testing::TestWithParam<std::string> {};

TEST_P(LockNames, EachLockIsNamedAsTheSourceNamesIt) {
  TemporaryDirectory dir;
  const ProcessProfile process =
      record_unchanged(dir, "lock_names", {}, record_options_for(GetParam()));
  SCOPED_TRACE("names:" + names_of(process));

  const LockSummary* global = lock_named(process, "global_lock");
  ASSERT_NE(global, nullptr);
  EXPECT_EQ(global->name_source, LockNameSource::kSymbol);
  EXPECT_EQ(lock_name_phrase(*global), "mutex global_lock");
  EXPECT_EQ(global->same_name_locks, 1u);

  // The members, from the fixture's DWARF types (a module without them: "shared_cache+0x40").
  const LockSummary* member = lock_named(process, "shared_cache.lock");
  ASSERT_NE(member, nullptr);
  EXPECT_EQ(member->name_source, LockNameSource::kSymbol);
  const LockSummary* element = lock_named(process, "stripes[2].lock");
  ASSERT_NE(element, nullptr);
  EXPECT_EQ(element->acquisitions, 1u);
  const LockSummary* cell = lock_named(process, "grid[1][2].lock");
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(cell->acquisitions, 1u);
  const LockSummary* padded = lock_named(process, "padded_lock.lock");
  ASSERT_NE(padded, nullptr);
  EXPECT_EQ(padded->acquisitions, 1u);

  const int init_line = marker_line("lock_names", "init");
  const int first_use_line = marker_line("lock_names", "first-use");
  const int cond_line = marker_line("lock_names", "cond-first-use");
  const LockSummary *made = nullptr, *copied = nullptr, *condvar = nullptr;
  for (const LockSummary& lock : process.locks) {
    if (lock.name_source == LockNameSource::kInitSite &&
        located_at(lock.init_site, "lock_names.c", init_line))
      made = &lock;
    if (lock.name_source == LockNameSource::kFirstUse &&
        located_at(lock.first_use_site, "lock_names.c", first_use_line))
      copied = &lock;
    if (lock.name_source == LockNameSource::kFirstUse &&
        located_at(lock.first_use_site, "lock_names.c", cond_line))
      condvar = &lock;
  }
  ASSERT_NE(made, nullptr) << "no lock named after its init at line " << init_line;
  EXPECT_EQ(made->name, made->init_site.label);
  EXPECT_EQ(lock_name_phrase(*made), "mutex initialised at " + made->init_site.label);
  EXPECT_NE(made->name.find("main"), std::string::npos) << made->name;
  EXPECT_NE(made->name.find(":" + std::to_string(init_line)), std::string::npos) << made->name;

  // Taken first at @first-use, then more often at @busy: named after the first.
  ASSERT_NE(copied, nullptr) << "no lock named after its first use at line " << first_use_line;
  EXPECT_EQ(copied->name, copied->first_use_site.label);
  EXPECT_EQ(copied->primitive, format::Primitive::kMutex);
  EXPECT_EQ(lock_name_phrase(*copied), "mutex first taken at " + copied->name);
  EXPECT_EQ(copied->acquisitions, 4u);

  ASSERT_NE(condvar, nullptr) << "no condvar named after its first wait at line " << cond_line;
  EXPECT_EQ(condvar->primitive, format::Primitive::kCondVar);
  EXPECT_EQ(lock_name_phrase(*condvar), "condvar first waited on at " + condvar->name);

  // A lock that no init named has no init site: the first use is not passed off as one.
  EXPECT_FALSE(copied->init_site.known());
  EXPECT_FALSE(global->init_site.known());
}

INSTANTIATE_TEST_SUITE_P(Modes, LockNames, ::testing::Values("summary", "trace"));

}  // namespace
}  // namespace lockscope::testing
