#include "report/sqlite_database.h"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace lockscope {

SqliteStatement::SqliteStatement(sqlite3* db, const std::string& sql) : db_(db) {
  check(
      sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size() + 1), &statement_, nullptr));
}

SqliteStatement::~SqliteStatement() {
  sqlite3_finalize(statement_);
}

void SqliteStatement::bind(int index, double value) {
  check(sqlite3_bind_double(statement_, index, value));
}

void SqliteStatement::bind(int index, const std::string& value) {
  check(sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()),
                          SQLITE_TRANSIENT));
}

void SqliteStatement::bind(int index, std::nullopt_t) {
  check(sqlite3_bind_null(statement_, index));
}

void SqliteStatement::check(int status) {
  if (status != SQLITE_OK) throw ReportSinkError(sqlite3_errmsg(db_));
}

void SqliteStatement::insert() {
  if (bound_ != sqlite3_bind_parameter_count(statement_))
    throw std::logic_error(fmt::format("{} values for {} columns in: {}", bound_,
                                       sqlite3_bind_parameter_count(statement_),
                                       sqlite3_sql(statement_)));
  if (sqlite3_step(statement_) != SQLITE_DONE) throw ReportSinkError(sqlite3_errmsg(db_));
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
  bound_ = 0;
}

SqliteDatabase::SqliteDatabase(const std::string& path) {
  // SQLite would open a file already there as a database: the report is a new one.
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  errno = 0;
  const int status =
      sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (status != SQLITE_OK) {
    // SQLite's own message ("unable to open database file") does not say why; errno does.
    const int error = errno;
    const std::string message = error ? std::strerror(error) : sqlite3_errstr(status);
    sqlite3_close(db_);
    db_ = nullptr;
    throw ReportSinkError(message);
  }
}

SqliteDatabase::~SqliteDatabase() {
  if (db_) sqlite3_close(db_);
}

void SqliteDatabase::execute(const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    throw ReportSinkError(message);
  }
}

void SqliteDatabase::close() {
  if (sqlite3_close(db_) != SQLITE_OK)
    throw ReportSinkError(fmt::format("closing the database: {}", sqlite3_errmsg(db_)));
  db_ = nullptr;
}

}  // namespace lockscope
