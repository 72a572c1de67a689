#pragma once
// Reading a result row in column order: `store::Columns(row) >> e.seq >> e.id >> …` reads
// column 0 into seq, column 1 into id, and so on. A row reader then names its fields in its
// SELECT's order, and no column number is written by hand.
//
// Types: std::int64_t and double (NULL reads 0), bool (an integer other than 0),
// std::string (NULL reads ""), std::optional<std::int64_t> and std::optional<std::string>
// (NULL reads std::nullopt). skip() passes a column over. Reading past the last column
// throws SQLite::Exception, as SQLite::Statement::getColumn does.
//
// Thread-safety: that of the statement (one thread at a time).

#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <optional>
#include <string>

namespace reflectd::store {

class Columns {
 public:
  /// Reads `row`'s current result row from column `first` on.
  explicit Columns(const SQLite::Statement& row, int first = 0) : row_(row), next_(first) {}

  Columns& operator>>(std::int64_t& value) {
    value = next().getInt64();
    return *this;
  }
  Columns& operator>>(double& value) {
    value = next().getDouble();
    return *this;
  }
  Columns& operator>>(bool& value) {
    value = next().getInt64() != 0;
    return *this;
  }
  Columns& operator>>(std::string& value) {
    const SQLite::Column column = next();
    value = column.isNull() ? std::string() : column.getString();
    return *this;
  }
  Columns& operator>>(std::optional<std::int64_t>& value) {
    const SQLite::Column column = next();
    value = column.isNull() ? std::nullopt : std::optional<std::int64_t>(column.getInt64());
    return *this;
  }
  Columns& operator>>(std::optional<std::string>& value) {
    const SQLite::Column column = next();
    value = column.isNull() ? std::nullopt : std::optional<std::string>(column.getString());
    return *this;
  }
  /// Passes the next column over.
  Columns& skip() {
    ++next_;
    return *this;
  }

 private:
  SQLite::Column next() { return row_.getColumn(next_++); }

  const SQLite::Statement& row_;
  int next_;
};

}  // namespace reflectd::store
