// Each call stack of a text report printed once (report/stack_ids.h): later by its id, and a
// stack that ends as one printed before by its own frames and a pointer into that one.
#include "report/stack_ids.h"

#include <gtest/gtest.h>

#include <sstream>

#include "code_locations.h"

namespace lockscope {
namespace {

TEST(StackIds, AStackIsPrintedOnceThenByIdAndASharedTailOnce) {
  const CodeLocation entry = code_location("start_thread", "pthread_create.c", 442);
  const CodeLocation clone = code_location("clone3", "clone3.S", 81);
  const CodeLocation worker = code_location("worker", "w.c", 40);
  const std::vector<CodeLocation> waits = {code_location("lock", "w.c", 12), worker, entry, clone};
  const std::vector<CodeLocation> releases = {code_location("unlock", "w.c", 14), worker, entry,
                                              clone};
  const std::vector<CodeLocation> other = {code_location("unlock", "o.c", 9), clone};
  StackIds ids;
  std::ostringstream out;
  ids.write("    20.8ms in 10 waits", waits, "      ", out);
  ids.write("    97.8ms in 5 holds", releases, "      ", out);
  ids.write("    1.00ms in 1 wait", waits, "      ", out);
  ids.write("    1 hold", other, "      ", out);
  EXPECT_EQ(out.str(),
            "    20.8ms in 10 waits: stack #1\n"
            "      lock w.c:12\n"
            "      worker w.c:40\n"
            "      start_thread pthread_create.c:442\n"
            "      clone3 clone3.S:81\n"
            "    97.8ms in 5 holds: stack #2\n"
            "      unlock w.c:14\n"
            "      … as stack #1 from worker w.c:40\n"
            "    1.00ms in 1 wait: stack #1, above\n"
            // One shared frame is not worth a pointer.
            "    1 hold: stack #3\n"
            "      unlock o.c:9\n"
            "      clone3 clone3.S:81\n");
}

// A lead line too long for the report's width wraps, but never inside "stack #N".
TEST(StackIds, AnIdIsNeverSplitOverTwoLines) {
  const std::vector<CodeLocation> frames = {code_location("lock", "w.c", 12)};
  StackIds ids;
  std::ostringstream first, again;
  ids.write("    " + std::string(100, 'x') + " in 1 wait", frames, "      ", first);
  ids.write("    " + std::string(100, 'x') + " in 1 wait", frames, "      ", again);
  EXPECT_EQ(first.str(), "    " + std::string(100, 'x') + " in 1 wait:\n        stack #1\n" +
                             "      lock w.c:12\n");
  EXPECT_EQ(again.str(), "    " + std::string(100, 'x') + " in 1 wait:\n        stack #1, above\n");
}

}  // namespace
}  // namespace lockscope
