#include "store/knowledge_store.hpp"
#include "store/bound_exec.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace reflectd::store {
namespace {

constexpr const char* kActiveDecisions =
    "SELECT decision_id FROM knowledge WHERE namespace = ?1 AND target = ?2 AND kind = 'decision' "
    "AND status = 'active' AND provenance = 'external' ORDER BY decision_id";

constexpr const char* kInsert = R"sql(
INSERT INTO knowledge (decision_id, namespace, kind, target, title, rationale, scope, status,
                       provenance, keywords, evidence_event_ids, consequences, supersedes,
                       procedural, frequency, unique_contexts, confidence, confidence_base,
                       salience_base, salience_ref_us, first_seen_us, last_seen_us, updated_us,
                       source_event_seq)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'external', ?9, ?10, ?11, ?12, ?13, 1, 1, ?14, ?14, ?15,
        ?16, ?17, ?17, ?18, ?19))sql";

constexpr const char* kInsertEvidence =
    "INSERT OR IGNORE INTO knowledge_evidence (decision_id, event_seq, ts_us, weight) "
    "VALUES (?1, ?2, ?3, 1.0)";

constexpr const char* kPreviousState =
    "SELECT json_object('status', status, 'phase', phase, 'vitality', vitality, 'confidence', "
    "confidence, 'superseded_by', superseded_by) FROM knowledge WHERE decision_id = ?1";

constexpr const char* kResolve =
    "UPDATE knowledge SET status = ?2, superseded_by = CASE WHEN ?2 = 'superseded' THEN ?3 "
    "ELSE superseded_by END, updated_us = ?4, ended_seq = ?6 WHERE decision_id = ?1 AND "
    "status = 'active' AND namespace = ?5";

std::string string_or(const nlohmann::json& object, const char* key, const std::string& fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::string array_or_empty(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_array() ? it->dump() : "[]";
}

}  // namespace

int semantic_priority(const EventRecord& event, const Admission& admission) {
  if (admission.refused) return 0;
  int priority = 0;
  if (event.kind == "constraint") {
    priority = 8;
  } else if (event.kind == "decision") {
    priority = 7;
  } else if (event.kind == "intervention") {
    priority = 6;
  } else if (event.kind == "assumption") {
    priority = 5;
  } else if (event.kind == "proposal") {
    priority = 4;
  }
  const auto context = nlohmann::json::parse(event.context_json, nullptr, false);
  const std::string scope = string_or(context, "scope", "local");
  if (scope == "system") priority += 1;
  if (scope == "infra") priority += 2;
  if (!admission.resolved_ids.empty()) priority += 1;
  if (event.importance && *event.importance >= 0.0 && *event.importance <= 1.0) {
    priority = std::max(priority, static_cast<int>(std::lround(*event.importance * 10.0)));
  }
  return std::clamp(priority, 0, 10);
}

KnowledgeStore::KnowledgeStore(SQLite::Database& db)
    : audit_(db),
      active_decisions_(db, kActiveDecisions),
      insert_(db, kInsert),
      insert_evidence_(db, kInsertEvidence),
      previous_state_(db, kPreviousState),
      resolve_(db, kResolve) {}

Admission KnowledgeStore::admit(const EventRecord& event) {
  Admission admission;
  const auto context = nlohmann::json::parse(event.context_json, nullptr, false);
  const auto resolution = event.resolution_json.empty()
                              ? nlohmann::json::object()
                              : nlohmann::json::parse(event.resolution_json, nullptr, false);
  const std::string type = string_or(resolution, "resolution_type", "");
  if (type == "abort") {
    admission.refused = true;
    admission.reason = "ABORTED: ResolutionIntent abort: no changes made.";
    return admission;
  }
  std::vector<std::string> named;
  if (const auto ids = resolution.find("target_decision_ids"); ids != resolution.end()) {
    for (const auto& id : *ids) {
      if (id.is_string()) named.push_back(id.get<std::string>());
    }
  }
  // Every semantic kind may supersede or deprecate the records it names; only a new active
  // decision must resolve the active decisions on its target (seed 000).
  if (type == "supersede" || type == "deprecate") {
    admission.resolution_type = type;
    admission.resolved_ids = named;
  }
  if (event.kind != "decision" || string_or(context, "status", "active") != "active") {
    return admission;
  }
  active_decisions_.reset();
  active_decisions_.bindNoCopy(1, event.ns);
  const std::string target = string_or(context, "target", "");
  active_decisions_.bind(2, target);
  while (active_decisions_.executeStep()) {
    admission.conflicting_ids.push_back(active_decisions_.getColumn(0).getString());
  }
  active_decisions_.reset();

  if (admission.conflicting_ids.empty()) return admission;
  const bool covered = std::all_of(
      admission.conflicting_ids.begin(), admission.conflicting_ids.end(),
      [&](const auto& id) { return std::find(named.begin(), named.end(), id) != named.end(); });
  if (admission.resolution_type.empty() || !covered) {
    admission.refused = true;
    admission.reason = kConflictReason;
  }
  return admission;
}

std::string KnowledgeStore::record(const EventRecord& event, std::int64_t seq,
                                   const Admission& admission, std::int64_t now_us) {
  const auto context = nlohmann::json::parse(event.context_json, nullptr, false);
  const bool proposal = event.kind == "proposal";
  std::string status = string_or(context, "status", proposal ? "draft" : "active");
  std::string scope = string_or(context, "scope", "local");
  if (scope != "local" && scope != "system" && scope != "infra") scope = "local";
  double confidence = event.confidence.value_or(1.0);
  if (const auto c = context.find("confidence"); c != context.end() && c->is_number()) {
    confidence = c->get<double>();
  }
  const std::string& id = event.uid;
  const std::string procedural = context.contains("procedural") && context["procedural"].is_object()
                                     ? context["procedural"].dump()
                                     : "";

  auto& s = insert_;
  s.reset();
  s.bind(1, id);
  s.bind(2, event.ns);
  s.bind(3, event.kind);
  s.bind(4, string_or(context, "target", ""));
  s.bind(5, string_or(context, "title", ""));
  s.bind(6, string_or(context, "rationale", ""));
  s.bind(7, scope);
  s.bind(8, status);
  s.bind(9, array_or_empty(context, "keywords"));
  nlohmann::json evidence = nlohmann::json::array({seq});
  if (const auto ids = context.find("evidence_event_ids");
      ids != context.end() && ids->is_array()) {
    for (const auto& e : *ids) evidence.push_back(e);
  }
  s.bind(10, evidence.dump());
  s.bind(11, array_or_empty(context, "consequences"));
  s.bind(12, nlohmann::json(admission.resolution_type == "supersede" ? admission.resolved_ids
                                                                     : std::vector<std::string>{})
                 .dump());
  if (procedural.empty()) {
    s.bind(13);
  } else {
    s.bind(13, procedural);
  }
  s.bind(14, confidence);
  s.bind(15, event.salience.value_or(1.0));
  s.bind(16, static_cast<std::int64_t>(event.received_us));
  s.bind(17, static_cast<std::int64_t>(event.timestamp_us));
  s.bind(18, static_cast<std::int64_t>(now_us));
  s.bind(19, static_cast<std::int64_t>(seq));
  s.exec();

  store::exec_bound(insert_evidence_, id, static_cast<std::int64_t>(seq),
                    static_cast<std::int64_t>(event.timestamp_us));

  const std::string actor = event.agent_id.empty() ? event.source : event.agent_id;
  audit_.append("knowledge", id, "create", actor, now_us,
                "published as a " + event.kind + " event (seq " + std::to_string(seq) + ")");

  const std::string new_status =
      admission.resolution_type == "supersede" ? "superseded" : "deprecated";
  for (const auto& old_id : admission.resolved_ids) {
    if (old_id == id) continue;
    previous_state_.reset();
    previous_state_.bind(1, old_id);
    if (!previous_state_.executeStep()) continue;
    const std::string previous = previous_state_.getColumn(0).getString();
    previous_state_.reset();
    resolve_.reset();
    resolve_.bind(1, old_id);
    resolve_.bind(2, new_status);
    resolve_.bind(3, id);
    resolve_.bind(4, static_cast<std::int64_t>(now_us));
    resolve_.bind(5, event.ns);
    resolve_.bind(6, static_cast<std::int64_t>(seq));  // its evidence ends before this event
    if (resolve_.exec() == 0) continue;
    audit_.append("knowledge", old_id, admission.resolution_type, actor, now_us,
                  new_status + " by " + id + ": " +
                      string_or(nlohmann::json::parse(event.resolution_json, nullptr, false),
                                "rationale", "ResolutionIntent"),
                  previous);
  }
  return id;
}

}  // namespace reflectd::store
