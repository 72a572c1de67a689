#include "memory_ops/forget.hpp"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "memory_ops/derived_state.hpp"
#include "store/audit_log.hpp"
#include "store/bound_exec.hpp"

namespace reflectd::memory_ops {
using json = nlohmann::json;

namespace {

constexpr const char* kForgotten = "(SELECT seq FROM temp.forget_seqs)";

void fill_forget_seqs(SQLite::Database& db, const std::vector<SelectedEvent>& events) {
  db.exec("CREATE TEMP TABLE IF NOT EXISTS forget_seqs (seq INTEGER PRIMARY KEY)");
  db.exec("DELETE FROM temp.forget_seqs");
  SQLite::Statement insert(db, "INSERT OR IGNORE INTO temp.forget_seqs (seq) VALUES (?1)");
  for (const auto& e : events) {
    store::exec_bound(insert, static_cast<std::int64_t>(e.seq));
  }
}

// A forgotten fact's successor takes over its predecessor; without a successor, the
// predecessor is current again (store/fact_store.cpp superseded it at the forgotten fact's
// valid_from). Newest first, so that a chain of forgotten facts unwinds one link at a time.
std::int64_t delete_facts(SQLite::Database& db) {
  SQLite::Statement doomed(db, std::string("SELECT fact_id, supersedes_fact_id, valid_from_us "
                                           "FROM facts WHERE source_seq IN ") +
                                   kForgotten + " ORDER BY fact_id DESC");
  struct Fact {
    std::int64_t id;
    std::optional<std::int64_t> predecessor;
    std::int64_t valid_from_us;
  };
  std::vector<Fact> facts;
  while (doomed.executeStep()) {
    Fact f{doomed.getColumn(0).getInt64(), std::nullopt, doomed.getColumn(2).getInt64()};
    if (!doomed.isColumnNull(1)) f.predecessor = doomed.getColumn(1).getInt64();
    facts.push_back(f);
  }
  doomed.reset();
  SQLite::Statement successor(
      db, "SELECT fact_id, valid_from_us FROM facts WHERE supersedes_fact_id = ?1 LIMIT 1");
  SQLite::Statement relink(db, "UPDATE facts SET supersedes_fact_id = ?2 WHERE fact_id = ?1");
  SQLite::Statement end_at(db,
                           "UPDATE facts SET valid_to_us = ?2 WHERE fact_id = ?1 AND "
                           "valid_to_us = ?3");
  SQLite::Statement reinstate(db,
                              "UPDATE facts SET is_stale = 0, valid_to_us = CASE WHEN "
                              "valid_to_us = ?2 THEN NULL ELSE valid_to_us END WHERE fact_id = ?1");
  SQLite::Statement unlink(db, "DELETE FROM fact_entity_links WHERE fact_id = ?1");
  SQLite::Statement remove(db, "DELETE FROM facts WHERE fact_id = ?1");
  for (const Fact& f : facts) {
    successor.reset();
    successor.bind(1, static_cast<std::int64_t>(f.id));
    std::optional<std::pair<std::int64_t, std::int64_t>> next;
    if (successor.executeStep()) {
      next.emplace(successor.getColumn(0).getInt64(), successor.getColumn(1).getInt64());
    }
    successor.reset();
    if (next) {
      relink.reset();
      relink.bind(1, static_cast<std::int64_t>(next->first));
      if (f.predecessor) {
        relink.bind(2, static_cast<std::int64_t>(*f.predecessor));
      } else {
        relink.bind(2);
      }
      relink.exec();
      if (f.predecessor) {
        store::exec_bound(end_at, static_cast<std::int64_t>(*f.predecessor),
                          static_cast<std::int64_t>(next->second),
                          static_cast<std::int64_t>(f.valid_from_us));
      }
    } else if (f.predecessor) {
      store::exec_bound(reinstate, static_cast<std::int64_t>(*f.predecessor),
                        static_cast<std::int64_t>(f.valid_from_us));
    }
    store::exec_bound(unlink, static_cast<std::int64_t>(f.id));
    store::exec_bound(remove, static_cast<std::int64_t>(f.id));
  }
  return static_cast<std::int64_t>(facts.size());
}

// Agents' own decisions (provenance 'external', written at ingest: knowledge_store.cpp) are
// not derived state; the ones a forgotten event carried go, with what they did.
void delete_agent_decisions(SQLite::Database& db, const std::string& actor, std::int64_t now_us,
                            DeleteOutcome& out) {
  std::vector<std::string> ids;
  {
    SQLite::Statement carried(db, std::string("SELECT decision_id FROM knowledge WHERE "
                                              "provenance = 'external' AND source_event_seq IN ") +
                                      kForgotten + " ORDER BY decision_id");
    while (carried.executeStep()) ids.push_back(carried.getColumn(0).getString());
  }
  store::AuditLog audit(db);
  SQLite::Statement resolved(
      db,
      "SELECT decision_id, json_object('status', status, 'superseded_by', superseded_by) "
      "FROM knowledge WHERE superseded_by = ?1 ORDER BY decision_id");
  SQLite::Statement reinstate(db,
                              "UPDATE knowledge SET status = 'active', superseded_by = NULL, "
                              "ended_seq = NULL, updated_us = ?2 WHERE decision_id = ?1");
  // The resolution rows quote the forgotten event's rationale ("superseded by ID: ..."), and
  // both kinds name its agent as their actor.
  SQLite::Statement redact(db,
                           "UPDATE audit_log SET rationale = ?2, actor = ?2, previous = NULL WHERE "
                           "record_id = ?1 OR rationale LIKE '% by ' || ?1 || ': %'");
  SQLite::Statement evidence(db, "DELETE FROM knowledge_evidence WHERE decision_id = ?1");
  // The consolidation job's running state of its evaluation (jobs/consolidation.hpp).
  SQLite::Statement running(db, "DELETE FROM consolidation_streams WHERE decision_id = ?1");
  SQLite::Statement remove(db, "DELETE FROM knowledge WHERE decision_id = ?1");
  for (const auto& id : ids) {
    resolved.bind(1, id);
    std::vector<std::pair<std::string, std::string>> earlier;
    while (resolved.executeStep()) {
      earlier.emplace_back(resolved.getColumn(0).getString(), resolved.getColumn(1).getString());
    }
    resolved.reset();
    out.audit_rows_redacted += store::exec_bound(redact, id, kForgottenRationale);
    for (const auto& [old_id, previous] : earlier) {
      store::exec_bound(reinstate, old_id, static_cast<std::int64_t>(now_us));
      audit.append("knowledge", old_id, "revise", actor, now_us,
                   "active again: the decision that resolved it was forgotten", previous);
    }
    store::exec_bound(evidence, id);
    store::exec_bound(running, id);
    store::exec_bound(remove, id);
    ++out.agent_decisions_deleted;
  }
  // Other agents' decisions that cited a forgotten event lose it from their evidence.
  db.exec(std::string("UPDATE knowledge SET evidence_event_ids = (SELECT json_group_array(value) "
                      "FROM json_each(knowledge.evidence_event_ids) WHERE CAST(value AS TEXT) NOT "
                      "IN (SELECT uid FROM events WHERE seq IN ") +
          kForgotten + ") AND CAST(value AS TEXT) NOT IN (SELECT CAST(seq AS TEXT) FROM " +
          kForgotten +
          ")) WHERE provenance = 'external' AND decision_id IN (SELECT decision_id FROM "
          "knowledge_evidence WHERE event_seq IN " +
          kForgotten + ")");
  db.exec(std::string("DELETE FROM knowledge_evidence WHERE event_seq IN ") + kForgotten);
}

// Foreign keys are off while a forget deletes (forget_events()), so this stands in for
// PRAGMA foreign_key_check, narrowed to what a forget can break: a row that still refers to a
// forgotten event. (The whole check took 5.6 s at 1M events, inside the write transaction.)
void check_no_references(SQLite::Database& db) {
  std::vector<std::pair<std::string, std::string>> references;
  {
    SQLite::Statement children(db,
                               "SELECT m.name, f.\"from\" FROM sqlite_schema m, "
                               "pragma_foreign_key_list(m.name) f WHERE m.type = 'table' AND "
                               "f.\"table\" = 'events' ORDER BY 1, 2");
    while (children.executeStep()) {
      references.emplace_back(children.getColumn(0).getString(), children.getColumn(1).getString());
    }
  }
  for (const auto& [table, column] : references) {
    SQLite::Statement dangling(db, "SELECT 1 FROM \"" + table + "\" WHERE \"" + column + "\" IN " +
                                       kForgotten + " LIMIT 1");
    if (dangling.executeStep()) {
      throw std::logic_error("forget would leave a row of " + table + " (" + column +
                             ") referring to an event that is gone");
    }
  }
}

// Foreign keys off on `db` for a scope (forget_events()). The pragma takes effect only outside
// a transaction: construct and destroy it between transactions. Every exit turns them back on;
// a failure to do so (the connection is then unusable anyway) is logged, not thrown.
class ForeignKeysOff {
 public:
  explicit ForeignKeysOff(SQLite::Database& db) : db_(db) { db_.exec("PRAGMA foreign_keys = OFF"); }
  ~ForeignKeysOff() {
    try {
      db_.exec("PRAGMA foreign_keys = ON");
    } catch (const SQLite::Exception& error) {
      spdlog::error("forget: cannot turn foreign keys back on: {}", error.what());
    }
  }
  ForeignKeysOff(const ForeignKeysOff&) = delete;
  ForeignKeysOff& operator=(const ForeignKeysOff&) = delete;

 private:
  SQLite::Database& db_;
};

}  // namespace

std::optional<std::vector<SelectedEvent>> forgettable(std::vector<SelectedEvent> events,
                                                      bool by_ids, const std::string& cmd,
                                                      json& kept, std::string& error) {
  std::vector<SelectedEvent> out;
  for (auto& e : events) {
    std::string reason;
    if (e.deletion_policy == "never") {
      reason = "deletion_policy never: it cannot be forgotten";
    } else if (e.pinned) {
      reason = "pinned: unpin it first";
    }
    if (reason.empty()) {
      out.push_back(std::move(e));
    } else if (by_ids) {
      error = cmd + ": event '" + e.id + "': " + reason;
      return std::nullopt;
    } else {
      kept.push_back({{"id", e.id}, {"reason", reason}});
    }
  }
  return out;
}

std::int64_t archive_events(SQLite::Database& db, const std::vector<SelectedEvent>& events,
                            const std::string& actor, std::int64_t now_us,
                            const std::string& rationale) {
  store::AuditLog audit(db);
  SQLite::Statement archive(
      db, "UPDATE events SET status = 'archived' WHERE seq = ?1 AND status = 'active'");
  std::int64_t changed = 0;
  for (const auto& e : events) {
    archive.reset();
    archive.bind(1, static_cast<std::int64_t>(e.seq));
    if (archive.exec() == 0) continue;
    ++changed;
    audit.append("event", e.id, "archive", actor, now_us, rationale,
                 json{{"status", e.status}, {"seq", e.seq}}.dump());
  }
  return changed;
}

DeleteOutcome delete_events(SQLite::Database& db, const std::vector<SelectedEvent>& events,
                            const std::string& actor, std::int64_t now_us,
                            const std::string& rationale) {
  DeleteOutcome out;
  // Lets migration 28's triggers accept the audit log's redactions and deletions, in this
  // transaction only.
  db.exec("INSERT INTO forget_in_progress (id) VALUES (1)");
  fill_forget_seqs(db, events);
  out.facts_deleted = delete_facts(db);
  delete_agent_decisions(db, actor, now_us, out);
  for (const auto& e : events) out.namespaces.insert(e.ns);
  store::AuditLog audit(db);
  for (const auto& e : events) {
    audit.append(
        "event", e.id, "delete", actor, now_us, rationale,
        json{{"namespace", e.ns}, {"kind", e.kind}, {"seq", e.seq}, {"status", e.status}}.dump());
  }
  // An event revised by a forgotten revision is the newest again (memory_ops/revise.hpp).
  db.exec(std::string("UPDATE events SET status = 'active', superseded_by = NULL "
                      "WHERE superseded_by IN (SELECT uid FROM events WHERE seq IN ") +
          kForgotten + ") AND seq NOT IN " + kForgotten);
  // The events' full-text postings go with them (events_fts_delete, migration 25).
  SQLite::Statement remove(db, std::string("DELETE FROM events WHERE seq IN ") + kForgotten);
  out.events_deleted = remove.exec();
  // Each namespace's newest time, once (migration 36 keeps the per-row trigger out of a forget).
  SQLite::Statement newest(db,
                           "INSERT INTO event_namespaces (namespace, max_ts_us) "
                           "SELECT namespace, max(ts_us) FROM events WHERE namespace = ?1 "
                           "GROUP BY namespace");
  SQLite::Statement gone(db, "DELETE FROM event_namespaces WHERE namespace = ?1");
  for (const auto& ns : out.namespaces) {
    store::exec_bound(gone, ns);
    store::exec_bound(newest, ns);
  }
  check_no_references(db);
  db.exec("DELETE FROM temp.forget_seqs");
  db.exec("DELETE FROM forget_in_progress");
  return out;
}

DeleteOutcome forget_events(jobs::JobContext& ctx, const std::vector<SelectedEvent>& events,
                            const std::string& actor, const std::string& rationale) {
  std::set<std::string> namespaces;
  for (const auto& e : events) namespaces.insert(e.ns);
  {
    jobs::WriteTransaction transaction(ctx);
    for (const auto& ns : namespaces) mark_for_clear(ctx.db, ns, ctx.clock.now_us());
    transaction.commit();
  }
  DeleteOutcome outcome;
  {
    const ForeignKeysOff off(ctx.db);
    std::set<std::string> cleared;
    std::int64_t transactions = 0;
    const std::int64_t clear_start = ctx.clock.monotonic_us();
    const std::int64_t cleared_rows = run_pending_clears(ctx, cleared, &transactions);
    const std::int64_t delete_start = ctx.clock.monotonic_us();
    ctx.cancel.check();
    jobs::WriteTransaction transaction(ctx);
    outcome = delete_events(ctx.db, events, actor, ctx.clock.now_us(), rationale);
    outcome.derived_rows_cleared += cleared_rows;
    outcome.clear_ms = (delete_start - clear_start) / 1000;
    outcome.clear_transactions = transactions;
    // A clear an earlier forget left unfinished (a crash) was finished too: rebuild it as well.
    outcome.namespaces.insert(cleared.begin(), cleared.end());
    transaction.commit();
    outcome.delete_ms = (ctx.clock.monotonic_us() - delete_start) / 1000;
  }
  ctx.cancel.check();
  {
    const std::int64_t optimize_start = ctx.clock.monotonic_us();
    jobs::WriteTransaction transaction(ctx);
    optimize_full_text_index(ctx.db);
    transaction.commit();
    outcome.optimize_ms = (ctx.clock.monotonic_us() - optimize_start) / 1000;
  }
  outcome.wal_truncated = truncate_wal(ctx.db);
  return outcome;
}

std::set<std::string> finish_pending_clears(jobs::JobContext& ctx) {
  std::set<std::string> cleared;
  const ForeignKeysOff off(ctx.db);
  run_pending_clears(ctx, cleared);
  return cleared;
}

void optimize_full_text_index(SQLite::Database& db) {
  db.exec("INSERT INTO events_fts (events_fts) VALUES ('optimize')");
}

bool truncate_wal(SQLite::Database& db) {
  SQLite::Statement checkpoint(db, "PRAGMA wal_checkpoint(TRUNCATE)");
  if (!checkpoint.executeStep()) return false;
  return checkpoint.getColumn(0).getInt() == 0;
}

json DeleteOutcome::to_json() const {
  return {{"events_deleted", events_deleted},
          {"facts_deleted", facts_deleted},
          {"agent_decisions_deleted", agent_decisions_deleted},
          {"audit_rows_redacted", audit_rows_redacted},
          {"derived_rows_cleared", derived_rows_cleared},
          {"namespaces", namespaces},
          {"wal_truncated", wal_truncated},
          {"clear_ms", clear_ms},
          {"clear_transactions", clear_transactions},
          {"delete_ms", delete_ms},
          {"optimize_ms", optimize_ms}};
}

}  // namespace reflectd::memory_ops
