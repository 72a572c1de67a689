#pragma once
// Which events a memory operation (forget, restore, pin, unpin) acts on, and whether the
// caller may: explicit ids, or a filter over namespace, agent, kind, time and text.
//
// Rules (docs/MEMORY.md):
//  - Every id must exist, lie in a namespace the caller may write and be at or below its
//    clearance (max_sensitivity); otherwise the whole request is refused with the id and the
//    reason (an unknown id, an id in another namespace and one above the clearance read the
//    same, so that they are not disclosed). A filter matches only such events.
//  - A filter needs at least one field; one without "namespace" spans namespaces and needs
//    admin; a non-admin caller's filter must name one of its namespaces. A filter matching
//    nothing is an error.
//  - At most kMaxSelectedEvents per request.
//
// Error policy: result values (an error text naming the field and the rule), never throws for
// input; SQLite::Exception on storage errors. Thread-safety: none (one connection's thread).

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reflectd::memory_ops {

/// Most events one request may select.
inline constexpr std::size_t kMaxSelectedEvents = 100'000;
/// Most ids one request may list.
inline constexpr std::size_t kMaxIds = 1'000;

/// Who asks: the authorized key's agent and namespaces (bus::Principal), as the daemon maps it.
struct WriteScope {
  std::string actor;  ///< The audit rows' actor: the key's agent_id, or "control".
  bool all_namespaces = true;
  std::vector<std::string> namespaces;  ///< When !all_namespaces.
  bool admin = true;
  int clearance = 4;  ///< Seed 002 sensitivity rank: 0 public .. 4 hyper.
  bool may_use(const std::string& ns) const;
};

struct EventFilter {
  std::string ns;                         ///< "namespace"; empty = every namespace (admin only).
  std::string agent_id;                   ///< "agent_id".
  std::string kind;                       ///< "kind".
  std::optional<std::int64_t> before_us;  ///< "before" (RFC 3339): ts strictly earlier.
  std::optional<std::int64_t> after_us;   ///< "after" (RFC 3339): ts strictly later.
  std::string text;  ///< "text": a substring of the content (ASCII case-insensitive).
};

/// What a request names: `ids` or `filter`, never both.
struct EventSelection {
  std::vector<std::string> ids;
  std::optional<EventFilter> filter;
};

/// Parses "ids" / "filter" of `request`. Returns the selection, or sets `error` to a text
/// that starts with `cmd` and names the field ("forget: filter.before: ...").
std::optional<EventSelection> parse_event_selection(const nlohmann::json& request,
                                                    const std::string& cmd, std::string& error);

/// One selected event, as the operation needs it.
struct SelectedEvent {
  std::int64_t seq = 0;
  std::string id;  ///< events.uid.
  std::string ns;
  std::string kind;
  std::string status;           ///< active|archived.
  std::string deletion_policy;  ///< auto_prune|manual_only|never (seed 002).
  bool pinned = false;
};

/// Resolves `selection` on `db` under `scope`, in seq order (ids: in the order given).
/// Returns nullopt and sets `error` per the rules above.
std::optional<std::vector<SelectedEvent>> resolve_event_selection(SQLite::Database& db,
                                                                  const EventSelection& selection,
                                                                  const WriteScope& scope,
                                                                  const std::string& cmd,
                                                                  std::string& error);

/// {"id","namespace","kind","status","pinned","deletion_policy"} of each event.
nlohmann::json to_json(const std::vector<SelectedEvent>& events);

}  // namespace reflectd::memory_ops
