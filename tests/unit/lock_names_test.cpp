// The names of locks whose profile holds no symbol and no first use (older files, trace
// rebuilds): the busiest acquire site, then the address; and a name shared by several locks.
#include "analysis/lock_names.h"

#include <gtest/gtest.h>

#include "analysis/symbolizer.h"

namespace lockscope {
namespace {

CodeLocation at(const std::string& label, uint64_t offset) {
  CodeLocation where;
  where.module = 0;
  where.offset = offset;
  where.label = label;
  return where;
}

SiteSummary site(format::Operation operation, const CodeLocation& where, uint64_t count) {
  SiteSummary summary;
  summary.operation = operation;
  summary.location = where;
  summary.count = count;
  return summary;
}

TEST(LockNames, WithoutSymbolOrFirstUseTheBusiestAcquireSiteNamesTheLock) {
  Profile profile;
  ProcessProfile process;
  LockSummary lock;
  lock.address = 0x5000;
  // The unlock site is called most, but names no lock: releases are not where a lock is taken.
  lock.sites = {site(format::Operation::kLock, at("rare w.c:10", 0x10), 2),
                site(format::Operation::kLock, at("often w.c:20", 0x20), 9),
                site(format::Operation::kUnlock, at("release w.c:30", 0x30), 11)};
  LockSummary unused;
  unused.address = 0x6000;
  LockSummary twin = lock;
  twin.address = 0x7000;
  process.locks = {lock, unused, twin};
  profile.processes = {process};
  Symbolizer symbolizer;
  name_locks(profile, symbolizer);
  const std::vector<LockSummary>& named = profile.processes[0].locks;
  EXPECT_EQ(named[0].name, "often w.c:20");
  EXPECT_EQ(named[0].name_source, LockNameSource::kBusiestSite);
  EXPECT_EQ(lock_name_phrase(named[0]), "mutex taken at often w.c:20");
  EXPECT_EQ(named[0].same_name_locks, 2u);
  EXPECT_EQ(named[1].name, "0x6000");
  EXPECT_EQ(named[1].name_source, LockNameSource::kAddress);
  EXPECT_EQ(named[1].same_name_locks, 1u);
  EXPECT_EQ(named[2].same_name_locks, 2u);
}

TEST(LockNames, AnInitSiteComesBeforeTheFirstUseAndAnUnnamedLockIsItsAddress) {
  Profile profile;
  ProcessProfile process;
  LockSummary lock;
  lock.primitive = format::Primitive::kRwLock;
  lock.address = 0x5000;
  lock.init_site = at("make w.c:5", 0x5);
  lock.first_use_site = at("use w.c:6", 0x6);
  process.locks = {lock};
  profile.processes = {process};
  Symbolizer symbolizer;
  name_locks(profile, symbolizer);
  EXPECT_EQ(profile.processes[0].locks[0].name, "make w.c:5");
  EXPECT_EQ(lock_name_phrase(profile.processes[0].locks[0]), "rwlock initialised at make w.c:5");
  LockSummary never_named;
  never_named.address = 0xbeef;
  EXPECT_EQ(lock_name(never_named), "0xbeef");  // a hand-made profile, not symbolized
}

TEST(LockNames, TheElementsOfOneGlobalArrayAreOneFamily) {
  LockSummary element;
  element.name = "stripes[12].lock";
  element.name_source = LockNameSource::kSymbol;
  EXPECT_EQ(lock_family_name(element), "stripes[].lock");
  element.name = "grid[3][40]";
  EXPECT_EQ(lock_family_name(element), "grid[][]");
  element.name = "table";
  EXPECT_EQ(lock_family_name(element), "table");
  // A site's label is its own family: "[" there is no index.
  LockSummary made;
  made.name = "make_stripes s.c:25 [build-id mismatch]";
  made.name_source = LockNameSource::kInitSite;
  EXPECT_EQ(lock_family_name(made), made.name);
}

}  // namespace
}  // namespace lockscope
