#pragma once
// Step 1 of the consolidation job's per-event work (jobs/consolidation.hpp, points 2 and 3):
// what it reads of an event's `context` and `entities` columns, the target the event names
// itself, and the evidence weight its kind gives it. Everything but EventFieldReader is pure
// and thread-safe; EventFieldReader is one per thread (it reuses simdjson's buffers).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobs/consolidation.hpp"
#include "jobs/event_json.hpp"

namespace reflectd::jobs::consolidation {

/// What consolidation reads of an event's `context` and `entities` (both JSON text).
struct EventFields {
  std::string target;              ///< context.target, when a string.
  std::vector<std::string> files;  ///< context.files' strings, then the entities' "file:" paths.
  bool success = false;            ///< truthy(context, "success").
  bool ends_trajectory = false;    ///< context has "exit_status" or "submission".
  bool merge = false;              ///< context.merge is true (a merge commit).
};

/// Reads EventFields with simdjson, keeping nlohmann's meaning (jobs/event_json.hpp): the last
/// of repeated keys counts, and a text simdjson rejects is read by nlohmann (a text neither
/// accepts, or a column that is not an object/array, gives no fields). Never throws on bad
/// JSON; not thread-safe (one reader per thread).
class EventFieldReader {
 public:
  /// The fields of one event; std::nullopt columns (SQL NULL) give none.
  EventFields read(const std::optional<std::string>& context,
                   const std::optional<std::string>& entities);

 private:
  void read_context(const std::string& text, EventFields& f);
  void read_entities(const std::string& text, EventFields& f);

  EventJsonReader json_;
};

/// The scope of the Conventional Commits header on the first non-blank line of `content`
/// ("fix(socket): ..." -> "socket"; model::conventional_commit_scope), else empty.
std::string conventional_scope(std::string_view content);

/// The most common top-level directory of `files` (leading slashes ignored; a path without a
/// directory does not count), ties going to the smallest name in byte order; empty when none.
std::string module_of_files(const std::vector<std::string>& files);

/// `target` when it has at least 3 bytes (seed 000 TargetStr), else empty.
std::string valid_target(const std::string& target);

/// The target an event names itself: context.target, else its conventional-commit scope, else
/// the module of its files, each taken only when valid_target() keeps it; empty when none (the
/// event then inherits its trajectory's target).
std::string own_target(const EventFields& fields, std::string_view content);

/// The evidence weight of an event's kind (consolidation.weight.*): a result weighs
/// weight_result_success when `success`, weight_result_other otherwise; a kind without a
/// weight gives 0.
double kind_weight(const ConsolidationParams& p, std::string_view kind, bool success);

/// What an event says as evidence.
struct EventEvidence {
  bool success = false;  ///< A result whose context says it succeeded.
  std::string problem;   ///< An error's whole content, else its "Problem:" line; may be empty.
  /// kind_weight(), plus weight_problem_solution when the content has both a "Problem:" and a
  /// "Solution:" line.
  double weight = 0;
};

/// The evidence of one event of `kind` with `content` and `fields`.
EventEvidence event_evidence(const ConsolidationParams& p, std::string_view kind,
                             const std::string& content, const EventFields& fields);

}  // namespace reflectd::jobs::consolidation
