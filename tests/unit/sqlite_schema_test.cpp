// docs/sqlite-schema.md documents every table and column the SQLite report creates: each table has
// its section, and in it each column its row (a code location's seven columns may be given as
// "`prefixfunction` … `prefixinlined_into`").
#include "report/sqlite_schema.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace lockscope {
namespace {

std::string schema_doc() {
  std::ifstream in(LOCKSCOPE_SOURCE_DIR "/docs/sqlite-schema.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The section of `doc` under "## name", up to the next "## ".
std::string section(const std::string& doc, const std::string& name) {
  const size_t start = doc.find("\n## " + name + "\n");
  if (start == std::string::npos) return "";
  const size_t end = doc.find("\n## ", start + 1);
  return doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

const char* const kLocationSuffixes[] = {"function", "file",  "line",        "module",
                                         "offset",   "label", "inlined_into"};
static_assert(std::size(kLocationSuffixes) == kLocationColumnCount);

bool documented(const std::string& text, const std::string& column) {
  if (text.find("`" + column + "`") != std::string::npos) return true;
  for (const char* suffix : kLocationSuffixes) {
    const std::string name = suffix;
    if (!column.ends_with(name)) continue;
    const std::string prefix = column.substr(0, column.size() - name.size());
    if (text.find("`" + prefix + "function` … `" + prefix + "inlined_into`") != std::string::npos)
      return true;
  }
  return false;
}

TEST(SqliteSchema, EveryTableAndColumnIsDocumented) {
  const std::string doc = schema_doc();
  ASSERT_FALSE(doc.empty());
  for (const SqliteTable& table : sqlite_tables()) {
    const std::string text = section(doc, table.name);
    ASSERT_FALSE(text.empty()) << "no section '## " << table.name << "'";
    for (const SqliteColumn& column : table.columns)
      EXPECT_TRUE(documented(text, column.name)) << table.name << "." << column.name;
  }
}

TEST(SqliteSchema, InsertsHaveAParameterPerColumn) {
  for (const SqliteTable& table : sqlite_tables()) {
    const std::string sql = insert_sql(table.name);
    EXPECT_EQ(size_t(std::count(sql.begin(), sql.end(), '?')), table.columns.size()) << sql;
  }
  EXPECT_THROW(insert_sql("nosuch"), std::logic_error);
  const std::string create = sqlite_schema_sql();
  EXPECT_NE(create.find("CREATE TABLE events (process_id INTEGER, seq INTEGER, tid INTEGER, "
                        "time_ns INTEGER, kind TEXT"),
            std::string::npos)
      << create;
}

}  // namespace
}  // namespace lockscope
