// Reading the JSON columns of stored events (`context`, `entities`, `relations`) in the jobs.
//
// The jobs read a few fields of each event's JSON. Parsing the whole text into an
// nlohmann::json was 11% of a +10,000 consolidation run and a quarter of the cluster job's
// extraction; simdjson parses it in a tenth of that, and only the fields a job reads are
// copied out. The meaning stays nlohmann's, which the jobs were written against and whose
// results are kept bit-identical:
//   - where an object repeats a key, the last value counts (nlohmann keeps the last);
//   - a text simdjson rejects but nlohmann accepts (an integer beyond 64 bits, nesting deeper
//     than simdjson's 1,024 levels) is parsed by nlohmann instead;
//   - a text neither accepts reads as null, as json::parse(text, nullptr, false) gives.
// Not thread-safe: one reader per thread (it reuses simdjson's buffers between texts).

#pragma once

#include <SQLiteCpp/SQLiteCpp.h>
#include <simdjson.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace reflectd::jobs {

/// The text of a JSON column (`context`, `entities`, `relations`), std::nullopt for NULL.
std::optional<std::string> column_text(const SQLite::Column& column);

/// The value nlohmann::json keeps for `key` in `object`: the last of repeated keys, or
/// std::nullopt when the key is absent.
std::optional<simdjson::dom::element> last_field(simdjson::dom::object object,
                                                 std::string_view key);

class EventJsonReader {
 public:
  /// Parses `text` with simdjson. Returns the document, or std::nullopt when simdjson rejects
  /// it; the document stays valid until the next call.
  std::optional<simdjson::dom::element> parse(const std::string& text);

  /// `context`, `entities` and `relations` reduced to what extract_entities() reads of them:
  /// context.target, context.tool (strings) and context.files (its strings); the entities'
  /// strings; each relation object's predicate, target, target_id (strings) and weight (a
  /// number, as a double). extract_entities() gives the same result on the reduced value as
  /// on the whole text parsed by nlohmann. Null for an absent (std::nullopt) or invalid text.
  nlohmann::json extraction_context(const std::optional<std::string>& text);
  nlohmann::json extraction_entities(const std::optional<std::string>& text);
  nlohmann::json extraction_relations(const std::optional<std::string>& text);

 private:
  simdjson::dom::parser parser_;
};

}  // namespace reflectd::jobs
