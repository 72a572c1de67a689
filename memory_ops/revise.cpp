#include "memory_ops/revise.hpp"

#include <stdexcept>

#include "common/sha256.hpp"
#include "memory_ops/request_fields.hpp"
#include "store/audit_log.hpp"
#include "store/event_lifecycle.hpp"
#include "store/event_revision.hpp"

namespace reflectd::memory_ops {
using json = nlohmann::json;

namespace {

// The wire format's limits (docs/WIRE.md): a revision is held to what a publisher
// could have sent.
constexpr std::size_t kMaxContentBytes = std::size_t{256} * 1024;
constexpr std::size_t kMaxEventIdChars = 128;

}  // namespace

std::optional<Revision> parse_revision(const json& request, std::string& error) {
  Revision r;
  r.id = required_text(request, "revise", "id", kMaxEventIdChars, error);
  if (error.empty())
    r.content = required_text(request, "revise", "content", kMaxContentBytes, error);
  if (error.empty())
    r.rationale = required_text(request, "revise", "rationale", kMaxRationaleBytes, error);
  if (!error.empty()) return std::nullopt;
  if (const auto it = request.find("context"); it != request.end()) {
    if (!it->is_object()) {
      error = "revise: context: must be an object";
      return std::nullopt;
    }
    r.context_json = it->dump();
  }
  if (const auto it = request.find("keep_timestamp"); it != request.end()) {
    if (!it->is_boolean()) {
      error = "revise: keep_timestamp: must be true or false";
      return std::nullopt;
    }
    r.keep_timestamp = it->get<bool>();
  }
  if (request.contains("new_id")) {
    r.new_id = required_text(request, "revise", "new_id", kMaxEventIdChars, error);
    if (!error.empty()) return std::nullopt;
  }
  return r;
}

json revise_event(SQLite::Database& db, const Revision& revision, const WriteScope& scope,
                  std::int64_t now_us) {
  std::string error;
  const auto selected = resolve_event_selection(db, EventSelection{{revision.id}, std::nullopt},
                                                scope, "revise", error);
  if (!selected) throw std::invalid_argument(error);
  const SelectedEvent& old = selected->front();
  SQLite::Statement read(db,
                         "SELECT storage_class, coalesce(relations, '[]'), superseded_by, "
                         "content_hash FROM events WHERE seq = ?1");
  read.bind(1, old.seq);
  read.executeStep();
  if (read.getColumn(0).getString() != "episodic") {
    throw std::invalid_argument(
        "revise: id: " + old.id + " is a " + old.kind +
        "; a decision, constraint, assumption, intervention or proposal is revised by a new one "
        "with resolution supersede (seed 000 ResolutionIntent)");
  }
  if (!read.getColumn(2).isNull()) {
    throw std::invalid_argument("revise: id: " + old.id + " is superseded by " +
                                read.getColumn(2).getString() + "; revise that revision");
  }
  json relations = json::parse(read.getColumn(1).getString(), nullptr, false);
  if (!relations.is_array()) relations = json::array();
  relations.push_back({{"predicate", "supersedes"}, {"target_id", old.id}});
  const std::string previous_hash = read.getColumn(3).getString();

  Sha256 sha256;
  std::string new_id = revision.new_id;
  const bool derived = new_id.empty();
  if (derived) {
    // Canonical JSON (keys sorted, no white space), as the wire format derives ids.
    new_id = sha256.hex(
        json{{"content", revision.content}, {"revises", old.id}, {"timestamp", now_us}}.dump());
  }
  SQLite::Statement taken(db, "SELECT 1 FROM events WHERE uid = ?1");
  taken.bind(1, new_id);
  if (taken.executeStep()) {
    throw std::invalid_argument("revise: new_id: " + new_id + " is already an event's id");
  }

  const auto lifecycle = store::read_event_lifecycle(db, old.id);
  const auto archive_at = model::archive_at_us(1.0, now_us, now_us, lifecycle->profile);
  store::RevisionRow row;
  row.revised_seq = old.seq;
  row.uid = new_id;
  row.uid_derived = derived;
  row.received_us = static_cast<std::int64_t>(now_us);
  row.content = revision.content;
  row.content_hash = sha256.hex(revision.content);
  if (!revision.context_json.empty()) row.context_json = revision.context_json;
  row.relations_json = relations.dump();
  if (archive_at) row.archive_at_us = static_cast<std::int64_t>(*archive_at);
  if (!revision.keep_timestamp) row.ts_us = static_cast<std::int64_t>(now_us);
  const std::int64_t new_seq = store::insert_revision(db, row);
  store::AuditLog audit(db);
  audit.append("event", old.id, "revise", scope.actor, now_us, revision.rationale,
               json{{"status", old.status}, {"content_hash", previous_hash}}.dump());
  audit.append("event", new_id, "create", scope.actor, now_us,
               "revision of " + old.id + ": " + revision.rationale);
  return {
      {"id", old.id}, {"superseded", old.seq}, {"revision", {{"id", new_id}, {"seq", new_seq}}}};
}

}  // namespace reflectd::memory_ops
