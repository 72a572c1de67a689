#pragma once
// revise (seed 002 AuditAction `revise`): a new revision of an episodic event
// that supersedes it. The revision is a new event: the old one's namespace, kind, agent,
// episode, tags, entities, sensitivity and lifecycle profile, with the new content (and
// context, when given), the time of the revision as its timestamp (or the old one's, with
// keep_timestamp), the salience of a new event
// (1.0), and a seed 002 relation {"predicate":"supersedes","target_id":<old id>}. The old
// event keeps its content, turns status `superseded` with `superseded_by` = the revision's id,
// and gets an audit row (action revise, the caller's rationale, previous = its status and
// content hash). Reads show both; recall returns only the newest revision.
//
// Rules: `rationale` is required (seed 002 AuditEntry.rationale); the event must be episodic
// (a decision, constraint, assumption, intervention or proposal is revised the seed 000 way:
// publish a new one with resolution supersede, or accept/reject the proposal); a superseded
// event cannot be revised again (revise its newest revision); a `never` deletion policy does
// not stop a revision (nothing is deleted).
//
// Runs on the writer thread (WriteRequest::apply), inside its transaction. Errors: input
// errors throw std::invalid_argument with a text naming the field; storage errors
// SQLite::Exception. Thread-safety: one connection's thread.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "memory_ops/event_selection.hpp"

namespace reflectd::memory_ops {

/// A parsed revise request.
struct Revision {
  std::string id;            ///< "id": the event revised.
  std::string content;       ///< "content": the new content, 1 B .. 256 KiB, no NUL.
  std::string context_json;  ///< "context" (an object) or empty: the old context is kept.
  std::string new_id;        ///< "new_id" or empty: derived (see revise_event).
  std::string rationale;     ///< "rationale": required.
  /// "keep_timestamp": the revision keeps the old event's timestamp (a correction of what was
  /// said then) instead of taking the time of the revision (what is true from now on).
  bool keep_timestamp = false;
};

/// Parses {"id","content","rationale","context"?,"new_id"?,"keep_timestamp"?}; nullopt with
/// `error` =
/// "revise: FIELD: RULE" on bad input.
std::optional<Revision> parse_revision(const nlohmann::json& request, std::string& error);

/// Applies `revision` under `scope` at `now_us` (µs since the epoch). Returns
/// {"id": old id, "revision": {"id","seq"}, "superseded": old seq}. The revision's id, unless
/// given, is the SHA-256 hex of {"content","revises","timestamp"} as canonical JSON (the
/// wire format's rule for ids it derives, docs/WIRE.md). Throws std::invalid_argument for an
/// unknown or out-of-scope id, a semantic kind, an already superseded event, or a new_id in use.
nlohmann::json revise_event(SQLite::Database& db, const Revision& revision, const WriteScope& scope,
                            std::int64_t now_us);

}  // namespace reflectd::memory_ops
