#pragma once
// Medallions written by agents (seed 001 Medallion Library v1): an agent creates
// a medallion with the seed's Evidence, updates it with new evidence, and changes its status
// explicitly. They sit in the seed's tables beside the medallion job's (so get, query, list,
// history, recall and context find them) and are listed in agent_medallions (migration 33).
//
// Requests ({"cmd":"medallion", "action": ...}):
//   create      "namespace", "medallion" {scope, summary, affordances, decisions?,
//               open_questions?, meta?}, "evidence" {session_summary, transcripts?,
//               artefacts?}, "supersedes"? (an id), "sensitivity"? (seed 002 level,
//               default public)
//   update      "id", "medallion" (the top-level fields to replace: at least one), "evidence",
//               "sensitivity"? (replaces the level; default: unchanged)
//   set_status  "id", "status" (active | stale | superseded), "superseded_by" (with
//               superseded, only), "rationale"
//
// Rules (seed 001 "State Transitions" and "Validation Rules"):
// - The whole medallion is validated as the job's are (jobs::validate_medallion).
// - reflectd sets meta.created_at and meta.updated_at from its clock (updated_at strictly
//   increases) and meta.schema_version "medallion.v1"; meta.model defaults to
//   "agent:<actor>"; meta.x_reflectd holds {namespace, written_by, version, superseded_by?}.
//   A given meta.medallion_id names the medallion (ids starting "med:" are the job's);
//   without one, reflectd makes "m-<16 hex digits>".
// - New medallions start active (a create's meta.status, when given, must be "active").
//   Status persists through updates (an update's meta.status must be the current one) and
//   changes only by set_status; nothing changes it automatically.
// - superseded needs superseded_by: another medallion of the same namespace and the same
//   scope (graph_nodes and tags as sets), updated after this one, not itself superseded. The
//   superseded medallion then says so in meta.x_reflectd.superseded_by. Leaving superseded
//   clears it. "supersedes" on create does this to the named medallion in the same
//   transaction.
// - Only agents' medallions take update and set_status: the job's are rebuilt from the
//   events and marked stale by them.
// - Every change writes an audit row (record_type medallion): create, revise (previous
//   {version, updated_at}), and for status supersede / deprecate (stale) / promote (active)
//   with previous {status, superseded_by}. An update moves the previous content to
//   medallion_history; each version's evidence is kept in medallion_evidence.
// - Scope: the namespace must be one the caller may write; another namespace's medallion reads
//   as unknown. Its sensitivity (agent_medallions.sensitivity, migration 35) is its level when
//   read, or the highest of the records it lists when that is higher (as for the job's): a
//   reader of lower clearance gets it redacted (recall/record_reads.cpp). A hard forget keeps
//   agents' medallions (they are not derived from events).
//
// Runs on the writer thread (WriteRequest::apply). Errors: input errors throw
// std::invalid_argument ("medallion: FIELD: RULE"); storage errors SQLite::Exception.
// Thread-safety: one connection's thread.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "memory_ops/event_selection.hpp"

namespace reflectd::memory_ops {

enum class MedallionAction { kCreate, kUpdate, kSetStatus };

struct MedallionWrite {
  MedallionAction action = MedallionAction::kCreate;
  std::string id;             ///< update, set_status; create: meta.medallion_id or "".
  std::string ns;             ///< create: "namespace".
  nlohmann::json medallion;   ///< create: the medallion; update: the fields to replace.
  nlohmann::json evidence;    ///< create, update: seed 001 Evidence.
  std::string supersedes;     ///< create: optional.
  std::string status;         ///< set_status.
  std::string superseded_by;  ///< set_status with status superseded.
  std::string rationale;      ///< set_status.
  std::string sensitivity;    ///< create, update: public|low|medium|high|hyper, or "" (default).
};

/// True for the actions that write (create, update, set_status); the others of
/// {"cmd":"medallion"} are reads (recall/record_reads.hpp).
bool is_medallion_write(const nlohmann::json& request);

/// Parses a write request; nullopt with `error` = "medallion: FIELD: RULE". Checks shapes and
/// limits (medallion and evidence at most 256 KiB each as JSON); the seed's validation of the
/// assembled medallion runs in write_medallion.
std::optional<MedallionWrite> parse_medallion_write(const nlohmann::json& request,
                                                    std::string& error);

/// Applies `write` at `now_us` (µs since the epoch) for `scope`. Returns {"id", "namespace",
/// "status", "version", "created_at", "updated_at", "scope"} (create, update; create adds
/// "superseded": the id it superseded, or null) or {"id", "namespace", "status",
/// "previous_status", "superseded_by", "changed"} (set_status; changed is false when the
/// medallion already had that status and superseded_by, and then nothing is written). Throws
/// std::invalid_argument per the rules above.
nlohmann::json write_medallion(SQLite::Database& db, const MedallionWrite& write,
                               const WriteScope& scope, std::int64_t now_us);

}  // namespace reflectd::memory_ops
