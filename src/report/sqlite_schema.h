// The tables of the SQLite report, one list of columns each: the CREATE TABLE and INSERT
// statements are made from it, and a test checks that docs/sqlite-schema.md documents every table
// and column it lists (what each means, and its unit, is said there).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/profile_format.h"

namespace lockscope {

struct SqliteColumn {
  std::string name;
  std::string type;  // "INTEGER", "TEXT", "REAL", or "INTEGER PRIMARY KEY"
};

struct SqliteTable {
  std::string name;
  std::vector<SqliteColumn> columns;
};

// A code location as columns (NULL where not known): function, file, line, module (its path),
// offset (in the module, or the absolute address), label (what the text report prints),
// inlined_into (the innermost function it was inlined into).
inline constexpr size_t kLocationColumnCount = 7;
// The primitives whose waits a thread row has a column of, in order: "<primitive>_wait_ns".
inline constexpr format::Primitive kWaitPrimitives[] = {
    format::Primitive::kMutex,    format::Primitive::kRwLock,    format::Primitive::kCondVar,
    format::Primitive::kSpinLock, format::Primitive::kSemaphore, format::Primitive::kBarrier};

// Every table, in the order they are created.
const std::vector<SqliteTable>& sqlite_tables();
// "CREATE TABLE ..." of every table, then the indexes, in one script.
std::string sqlite_schema_sql();
// The indexes, created once the rows are in.
std::string sqlite_index_sql();
// "INSERT INTO name VALUES (?, ?, ...)", a parameter per column.
std::string insert_sql(const std::string& table);

}  // namespace lockscope
