#pragma once
// FTS5 MATCH expressions built from user text (SQLite FTS5, "Full-text Query Syntax"): the
// one place where words typed by a user become FTS5 syntax.
// Thread-safety: pure functions. Errors: none; text without a word yields an empty query.

#include <string>
#include <string_view>

namespace reflectd::text {

/// An FTS5 MATCH expression that matches every word of `text`: each run of ASCII letters,
/// digits, '_' and non-ASCII bytes becomes one double-quoted string, so no user text is ever
/// parsed as FTS5 syntax. Empty when `text` has no word.
std::string fts_query(std::string_view text);

}  // namespace reflectd::text
