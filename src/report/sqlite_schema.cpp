#include "report/sqlite_schema.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "analysis/profile_model.h"

namespace lockscope {
namespace {

using Columns = std::vector<SqliteColumn>;

Columns operator+(Columns a, const Columns& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Columns integers(std::initializer_list<const char*> names) {
  Columns out;
  for (const char* name : names) out.push_back({name, "INTEGER"});
  return out;
}

// kLocationColumnCount columns, named "<prefix>function"...
Columns location(const std::string& prefix) {
  return {{prefix + "function", "TEXT"},    {prefix + "file", "TEXT"},
          {prefix + "line", "INTEGER"},     {prefix + "module", "TEXT"},
          {prefix + "offset", "INTEGER"},   {prefix + "label", "TEXT"},
          {prefix + "inlined_into", "TEXT"}};
}

Columns thread_waits() {
  Columns out;
  for (format::Primitive primitive : kWaitPrimitives)
    out.push_back({primitive_name(primitive) + "_wait_ns", "INTEGER"});
  return out;
}

const SqliteColumn kId(const char* name) {
  return {name, "INTEGER PRIMARY KEY"};
}

}  // namespace

const std::vector<SqliteTable>& sqlite_tables() {
  static const std::vector<SqliteTable> tables = {
      {"processes",
       Columns{kId("process_id")} + integers({"pid", "ppid"}) +
           Columns{{"executable", "TEXT"},
                   {"arguments", "TEXT"},
                   {"exec_target", "TEXT"},
                   {"exec_file", "TEXT"},
                   {"exec_not_profiled", "TEXT"},
                   {"profile_file", "TEXT"}} +
           integers({"start_realtime_ns", "duration_ns"}) + Columns{{"ended_by", "TEXT"}} +
           integers({"exit_status"}) + Columns{{"clock", "TEXT"}, {"ticks_per_second", "REAL"}} +
           integers({"hold_sample_period", "traced", "trace_cut_short", "trace_lost_events"})},
      {"threads", integers({"process_id", "tid"}) + Columns{{"name", "TEXT"}} +
                      integers({"main", "exited", "acquisitions", "releases", "contended", "failed",
                                "lock_wait_ns", "lock_wait_max_ns"}) +
                      thread_waits() + integers({"barrier_last_arrivals"})},
      {"stacks", Columns{kId("stack_id")} +
                     integers({"process_id", "stack_index", "depth", "physical_frames"})},
      {"frames", integers({"stack_id", "depth", "physical_depth", "inlined"}) + location("")},
      {"locks",
       Columns{kId("lock_id")} + integers({"process_id", "address"}) +
           Columns{{"address_hex", "TEXT"}} + integers({"generation"}) +
           Columns{{"primitive", "TEXT"}, {"kind", "TEXT"}} +
           Columns{{"name", "TEXT"}, {"name_source", "TEXT"}} + integers({"same_name_locks"}) +
           integers({"capacity",      "destroyed",       "owner_died",     "acquisitions",
                     "releases",      "contended",       "failed",         "wait_ns",
                     "wait_max_ns",   "hold_ns",         "hold_error_ns",  "hold_max_ns",
                     "owner_changes", "events",          "reacquisitions", "reacquire_wait_ns",
                     "wakeups",       "wake_latency_ns", "cross_cpu",      "same_cpu"}) +
           location("init_") + location("first_use_")},
      {"sites", Columns{kId("site_id")} + integers({"lock_id", "process_id"}) +
                    Columns{{"operation", "TEXT"}, {"class", "TEXT"}} + location("") +
                    integers({"count", "contended", "failed", "wait_ns", "wait_max_ns", "hold_ns",
                              "hold_error_ns", "hold_max_ns", "holds_timed", "behind_readers",
                              "behind_writer", "with_waiters", "without_waiters", "arrived_last",
                              "cross_cpu", "same_cpu"})},
      {"site_stacks", integers({"site_id", "stack_id"}) + Columns{{"weight", "TEXT"}} +
                          integers({"count", "time_ns"})},
      {"blame", integers({"site_id", "lock_id"}) + location("holder_") +
                    integers({"waiter_stack_id", "holder_stack_id"}) +
                    Columns{{"holder_stack_from", "TEXT"}} + integers({"waits", "wait_ns"})},
      {"lock_order", integers({"process_id", "held_lock_id", "taken_lock_id"}) +
                         location("held_at_") + location("taken_at_") +
                         Columns{{"held_operation", "TEXT"}, {"taken_operation", "TEXT"}} +
                         integers({"tid", "stack_id"})},
      {"trace_files", integers({"process_id", "tid"}) + Columns{{"file", "TEXT"}} +
                          integers({"events", "overwritten", "dropped", "filtered", "closed"}) +
                          Columns{{"problem", "TEXT"}}},
      {"events", integers({"process_id", "seq", "tid", "time_ns"}) +
                     Columns{{"kind", "TEXT"}, {"operation", "TEXT"}} +
                     integers({"lock_id", "address", "generation"}) + location("site_") +
                     integers({"waited", "failed", "timed_out", "wait_ns"}) +
                     Columns{{"thread_name", "TEXT"}}},
      // The diagnosis (analysis/diagnosis/finding.h), ranked: finding_id 1 is the verdict.
      {"findings", Columns{kId("finding_id")} +
                       Columns{{"rule", "TEXT"}, {"severity", "TEXT"}, {"title", "TEXT"}} +
                       integers({"process_id", "lock_id"}) + Columns{{"lock_name", "TEXT"}} +
                       location("site_") + Columns{{"advice", "TEXT"}} +
                       integers({"time_at_stake_ns"})},
      {"finding_locks", integers({"finding_id", "rank", "process_id", "lock_id"})},
      {"finding_sites", integers({"finding_id", "rank", "process_id"}) + location("")},
      {"finding_evidence", integers({"finding_id", "rank"}) + Columns{{"key", "TEXT"}} +
                               Columns{{"value", "REAL"}, {"text", "TEXT"}}},
  };
  return tables;
}

std::string sqlite_schema_sql() {
  std::string sql;
  for (const SqliteTable& table : sqlite_tables()) {
    std::vector<std::string> columns;
    for (const SqliteColumn& column : table.columns)
      columns.push_back(column.name + " " + column.type);
    sql += fmt::format("CREATE TABLE {} ({});\n", table.name, fmt::join(columns, ", "));
  }
  return sql;
}

std::string sqlite_index_sql() {
  return "CREATE INDEX frames_by_stack ON frames (stack_id, depth);\n"
         "CREATE INDEX sites_by_lock ON sites (lock_id);\n"
         "CREATE INDEX site_stacks_by_site ON site_stacks (site_id);\n"
         "CREATE INDEX site_stacks_by_stack ON site_stacks (stack_id);\n"
         "CREATE INDEX blame_by_site ON blame (site_id);\n"
         "CREATE INDEX events_by_thread ON events (process_id, tid, time_ns);\n";
}

std::string insert_sql(const std::string& table) {
  for (const SqliteTable& known : sqlite_tables())
    if (known.name == table) {
      std::vector<std::string> parameters(known.columns.size(), "?");
      return fmt::format("INSERT INTO {} VALUES ({})", table, fmt::join(parameters, ", "));
    }
  throw std::logic_error("no table " + table);
}

}  // namespace lockscope
