// `lockscope diff` of two `lockscope bench --json` results from the real lab: two runs of one
// experiment pass the gate, pthread against ticket comes out in the order the lab's own relative
// summary gives, and every bad input is a one-line error with exit status 2.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "integration/lockscope_harness.h"

namespace lockscope::testing {
namespace {

using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream file(path);
  return json::parse(file);
}

void write_json(const std::string& path, const json& document) {
  std::ofstream(path) << document.dump(2);
}

void run_lab(const std::vector<std::string>& args) {
  std::vector<std::string> command = {"bench"};
  command.insert(command.end(), args.begin(), args.end());
  const CommandResult lab = run_lockscope(command);
  ASSERT_EQ(lab.exit_status, 0) << lab.err;
}

struct DiffResult {
  int exit_status = -1;
  json document;
  std::string out, err;
};

DiffResult diff(const std::string& base, const std::string& changed,
                const std::vector<std::string>& options = {"-f", "json"}) {
  std::vector<std::string> args = {"diff", base, changed};
  args.insert(args.end(), options.begin(), options.end());
  const CommandResult result = run_lockscope(args);
  DiffResult d{result.exit_status, json(), result.out, result.err};
  if (result.exit_status != 2 && !result.out.empty() && result.out.front() == '{')
    d.document = json::parse(result.out);
  return d;
}

std::size_t significant_figures(const json& document, std::size_t* figures) {
  std::size_t significant = 0;
  for (const json& c : document["matched"])
    for (const auto& [name, figure] : c["figures"].items()) {
      ++*figures;
      significant += figure["verdict"] == "better" || figure["verdict"] == "worse";
    }
  return significant;
}

// Two runs of the lab, one after the other, on one machine. With 1 and 2 threads there are four
// figures (iterations/ms at each, handoffs/s and fairness at 2), so "at most one significant"
// is a real check.
//
// Another pair is run when one fails (three at most): two invocations in a row on a shared
// machine are not two draws from one distribution. On the 2-core VM this was written on, under
// a load of 7–11 (parallel builds), per-run iterations/ms varied ±50 % and 30 pairs of 1-thread
// runs gave p ≥ 0.22 every time; but on a quiet machine the runs are tight (±2 %), and a step in
// load or clock between the two invocations is then a real, significant change of more than
// 10 % that the test cannot tell from a false one. A diff that flags identical experiments fails
// every pair. (Two pairs in a row failed once under a load of 11 from parallel builds.)
TEST(BenchDiff, TwoRunsOfTheLabPassTheGateWithAtMostOneFigureSignificant) {
  TemporaryDirectory dir;
  std::string failures;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const std::string a = dir / ("a" + std::to_string(attempt) + ".json");
    const std::string b = dir / ("b" + std::to_string(attempt) + ".json");
    for (const std::string& path : {a, b})
      run_lab({"mutex", "--locks", "pthread", "--threads", "1,2", "--duration", "0.02", "--runs",
               "5", "--json", path});
    const DiffResult result = diff(a, b);
    ASSERT_NE(result.exit_status, 2) << result.err;
    // What does not depend on timing: both cases matched, nothing one-sided, no warning.
    ASSERT_EQ(result.document["matched"].size(), 2u) << result.out;
    EXPECT_TRUE(result.document["only_base"].empty());
    EXPECT_TRUE(result.document["only_new"].empty());
    EXPECT_TRUE(result.document["warnings"].empty()) << result.document["warnings"].dump();
    EXPECT_TRUE(result.document["tested"].get<bool>());
    std::size_t figures = 0;
    const std::size_t significant = significant_figures(result.document, &figures);
    EXPECT_EQ(figures, 4u);
    if (result.exit_status == 0 && significant <= 1) {
      const DiffResult text = diff(a, b, {});
      EXPECT_EQ(text.exit_status, 0);
      EXPECT_NE(text.out.find("\nLab figures: "), std::string::npos) << text.out;
      EXPECT_NE(text.out.find("\nGate: passed (any:10%)\n"), std::string::npos) << text.out;
      if (!failures.empty()) std::cerr << "first pair flagged, second passed:\n" << failures;
      return;
    }
    failures += fmt::format("pair {}: exit {}, {} of {} significant\n{}\n", attempt,
                            result.exit_status, significant, figures, result.out);
  }
  ADD_FAILURE() << failures;
}

// A copy of a lab result that holds the mutex case of `lock` only, as `--locks LOCK` writes it.
json only_lock(json document, const std::string& lock) {
  json& mutex = document["scenarios"]["mutex"];
  json cases = json::array();
  for (const json& c : mutex["cases"])
    if (c["lock"] == lock) cases.push_back(c);
  mutex["cases"] = cases;
  mutex["parameters"]["locks"] = json::array({lock});
  mutex["relative"] = json::object();
  return document;
}

// One lab run of both locks, split in two files of one lock each: the diff of the two must say
// what the lab's relative summary of the same runs says.
TEST(BenchDiff, PthreadAgainstTicketComesOutInTheLabsOwnOrder) {
  TemporaryDirectory dir;
  run_lab({"mutex", "--locks", "pthread,ticket", "--threads", "2", "--duration", "0.05", "--runs",
           "5", "--json", dir / "both.json"});
  const json both = read_json(dir / "both.json");
  const json& relative = both["scenarios"]["mutex"]["relative"]["2"];
  ASSERT_EQ(relative.size(), 1u) << both["scenarios"]["mutex"].dump();
  const bool lab_says_ticket_slower = relative[0]["best"] == "pthread";
  const double lab_ratio = relative[0]["ratio"], lab_uncertainty = relative[0]["uncertainty"];
  write_json(dir / "pthread.json", only_lock(both, "pthread"));
  write_json(dir / "ticket.json", only_lock(both, "ticket"));

  const DiffResult forward = diff(dir / "pthread.json", dir / "ticket.json");
  ASSERT_NE(forward.exit_status, 2) << forward.err;
  ASSERT_EQ(forward.document["matched"].size(), 1u) << forward.out;
  const json& matched = forward.document["matched"][0];
  EXPECT_EQ(matched["name"], "mutex pthread → ticket, 2 threads");
  const json& per_ms = matched["figures"]["iterations_per_ms"];
  const double estimate = per_ms["ratio"]["estimate"];
  const std::string verdict = per_ms["verdict"];
  const std::string context = fmt::format("lab: {} {:.2f} ± {:.2f}× faster; diff: {}",
                                          relative[0]["best"].get<std::string>(), lab_ratio,
                                          lab_uncertainty, per_ms.dump());
  // A significant change has the lab's direction; so has the estimate when the lab is sure.
  if (verdict == "worse" || verdict == "better") {
    EXPECT_EQ(verdict == "worse", lab_says_ticket_slower) << context;
  }
  if (lab_ratio - lab_uncertainty > 1) {
    EXPECT_EQ(estimate < 1, lab_says_ticket_slower) << context;
  }
  EXPECT_EQ(forward.exit_status, forward.document["gate"]["regressions"].empty() ? 0 : 1);
  const std::string sentence = forward.document["lock_against_lock"][0];
  EXPECT_NE(sentence.find(verdict == "worse"    ? "× slower than pthread"
                          : verdict == "better" ? "× faster than pthread"
                                                : "no significant difference"),
            std::string::npos)
      << sentence;

  // The same files the other way round: every figure's verdict mirrored, its ratio inverted.
  const DiffResult backward = diff(dir / "ticket.json", dir / "pthread.json");
  ASSERT_NE(backward.exit_status, 2) << backward.err;
  EXPECT_EQ(backward.document["matched"][0]["name"], "mutex ticket → pthread, 2 threads");
  for (const auto& [name, figure] : matched["figures"].items()) {
    const json& mirror = backward.document["matched"][0]["figures"][name];
    const std::string v = figure["verdict"];
    EXPECT_EQ(mirror["verdict"], v == "worse" ? "better" : v == "better" ? "worse" : v) << name;
    EXPECT_NEAR(
        mirror["ratio"]["estimate"].get<double>() * figure["ratio"]["estimate"].get<double>(), 1.0,
        1e-9)
        << name;
    EXPECT_NEAR(mirror["test"]["p_value"].get<double>(), figure["test"]["p_value"].get<double>(),
                1e-12)
        << name;
  }
}

// Two separate runs, `--locks pthread` and `--locks ticket`: one case, matched by thread count.
TEST(BenchDiff, OneLockPerRunIsMatchedAsOneLockAgainstTheOther) {
  TemporaryDirectory dir;
  for (const char* lock : {"pthread", "ticket"})
    run_lab({"mutex", "--locks", lock, "--threads", "2", "--duration", "0.02", "--runs", "5",
             "--json", dir / (std::string(lock) + ".json")});
  const DiffResult result = diff(dir / "pthread.json", dir / "ticket.json");
  ASSERT_NE(result.exit_status, 2) << result.err;
  ASSERT_EQ(result.document["matched"].size(), 1u) << result.out;
  EXPECT_EQ(result.document["matched"][0]["name"], "mutex pthread → ticket, 2 threads");
  EXPECT_EQ(result.document["matched"][0]["figures"].size(), 3u);
  EXPECT_TRUE(result.document["only_base"].empty());
  EXPECT_TRUE(result.document["only_new"].empty());
  // The lab's parameters list the lock: not a difference in how it ran.
  EXPECT_TRUE(result.document["warnings"].empty()) << result.document["warnings"].dump();
}

TEST(BenchDiff, BadInputsAreOneLineErrorsWithExitStatusTwo) {
  TemporaryDirectory dir;
  run_lab({"mutex", "--locks", "pthread", "--threads", "1", "--duration", "0.01", "--runs", "2",
           "--json", dir / "mutex.json"});
  run_lab({"condvar", "--runs", "2", "--iterations", "200", "--json", dir / "condvar.json"});
  std::ofstream(dir / "notes.txt") << "not JSON\n";
  write_json(dir / "other.json", json{{"schema_version", 1}, {"matched", json::array()}});
  const std::string mutex = dir / "mutex.json";
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"diff", mutex, dir / "notes.txt"}, "is not a bench result: not JSON"},
      {{"diff", dir / "other.json", mutex}, "is not a bench result: JSON without \"schema\""},
      {{"diff", mutex, dir / "condvar.json"}, "have no lab case in common (base: mutex pthread"},
      {{"diff", mutex, dir.path()}, "is a file and"},
      {{"diff", dir.path(), mutex}, "is a file and"},
      {{"diff", mutex, dir / "missing.json"}, "cannot read"},
      {{"diff", mutex, mutex, "--fail-on", "wait:+10%"}, "'wait' is not a lab figure"},
      {{"diff", mutex, mutex, "--fail-on", "iterations_per_ms:+5%"}, "a regression is a drop"},
      {{"diff", mutex, mutex, "--sites"}, "--sites"},
  };
  for (const Case& c : cases) {
    const CommandResult result = run_lockscope(c.args);
    EXPECT_EQ(result.exit_status, 2) << c.says << ": " << result.err;
    EXPECT_EQ(result.err.rfind("lockscope: error: diff: ", 0), 0u) << result.err;
    const std::string first_line = result.err.substr(0, result.err.find('\n'));
    EXPECT_NE(first_line.find(c.says), std::string::npos) << result.err;
    // One line, and at most a hint after it.
    const std::string rest = result.err.substr(first_line.size());
    EXPECT_TRUE(rest == "\n" || rest.rfind("\nhint: ", 0) == 0) << result.err;
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
}

}  // namespace
}  // namespace lockscope::testing
