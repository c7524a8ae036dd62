// The little of SQLite's C API the sqlite writer needs: a database file created new, statements
// executed, and prepared INSERTs whose values are bound by type. Every failure is a
// ReportSinkError carrying SQLite's message, so the CLI removes the half-written file and says why.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "report/report_writer.h"

namespace lockscope {

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, const std::string& sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  // Binds the next parameter (?1, ?2... in turn): integers, doubles, text, nullopt (NULL) or an
  // optional of one of those.
  template <typename Value>
  SqliteStatement& add(const Value& value) {
    bind(++bound_, value);
    return *this;
  }
  // Runs the statement with the values added (every parameter must have one), resets it for the
  // next row.
  void insert();
  // add() of each value, then insert().
  template <typename... Values>
  void insert(const Values&... values) {
    (add(values), ...);
    insert();
  }

 private:
  template <typename Integer>
  requires std::is_integral_v<Integer>
  void bind(int index, Integer value) {
    // Counts and nanoseconds stay far below 2^63; addresses above it would read back negative.
    check(sqlite3_bind_int64(statement_, index, static_cast<sqlite3_int64>(value)));
  }
  void bind(int index, double value);
  void bind(int index, const std::string& value);
  void bind(int index, const char* value) { bind(index, std::string(value)); }
  void bind(int index, std::nullopt_t);
  template <typename T>
  void bind(int index, const std::optional<T>& value) {
    if (value)
      bind(index, *value);
    else
      bind(index, std::nullopt);
  }
  void check(int status);

  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
  int bound_ = 0;
};

class SqliteDatabase {
 public:
  // Creates the database at `path`, replacing any file there.
  explicit SqliteDatabase(const std::string& path);
  ~SqliteDatabase();
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  void execute(const std::string& sql);
  SqliteStatement prepare(const std::string& sql) { return SqliteStatement(db_, sql); }
  // Closes the file; throws when SQLite could not finish writing it.
  void close();

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace lockscope
