#include "memory_ops/medallions.hpp"

#include <SQLiteCpp/VariadicBind.h>

#include <algorithm>
#include <array>
#include <set>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "common/timestamp.hpp"
#include "common/utf8.hpp"
#include "jobs/medallion.hpp"
#include "memory_ops/request_fields.hpp"
#include "store/audit_log.hpp"
#include "store/medallion_store.hpp"

namespace reflectd::memory_ops {
using json = nlohmann::json;

namespace {

constexpr std::size_t kMaxIdBytes = 200;
constexpr std::size_t kMaxNamespaceBytes = 256;
constexpr std::size_t kMaxSummaryBytes = std::size_t{16} * 1024;
constexpr std::size_t kMaxJsonBytes = std::size_t{256} * 1024;
constexpr std::size_t kAuditSummaryBytes = 300;
constexpr const char* kJobIdPrefix = "med:";

const std::set<std::string>& medallion_fields() {
  static const std::set<std::string> fields{"meta",      "scope",          "summary",
                                            "decisions", "open_questions", "affordances"};
  return fields;
}

const std::set<std::string>& meta_fields() {
  static const std::set<std::string> fields{
      "medallion_id",     "schema_version",   "model",  "created_at", "updated_at",
      "knowledge_min_ts", "knowledge_max_ts", "status", "x_reflectd"};
  return fields;
}

[[noreturn]] void refuse(const std::string& field, const std::string& rule) {
  throw std::invalid_argument("medallion: " + field + ": " + rule);
}

// Shapes only; the seed's rules run on the assembled medallion.
std::string check_medallion_shape(const json& m, bool create) {
  if (!m.is_object()) return "medallion: medallion: must be an object (seed 001 Medallion)";
  if (m.dump().size() > kMaxJsonBytes) {
    return "medallion: medallion: must be at most " + std::to_string(kMaxJsonBytes) +
           " bytes as JSON";
  }
  for (const auto& [key, value] : m.items()) {
    if (medallion_fields().count(key) == 0) {
      return "medallion: medallion." + key +
             ": not a field of a seed 001 Medallion (meta, scope, summary, decisions, "
             "open_questions, affordances)";
    }
  }
  if (!create && m.empty()) {
    return "medallion: medallion: give at least one of scope, summary, decisions, "
           "open_questions, affordances, meta";
  }
  if (const auto meta = m.find("meta"); meta != m.end()) {
    if (!meta->is_object()) return "medallion: medallion.meta: must be an object";
    for (const auto& [key, value] : meta->items()) {
      if (meta_fields().count(key) == 0) {
        return "medallion: medallion.meta." + key + ": not a field of seed 001 MedallionMeta";
      }
    }
    if (const auto id = meta->find("medallion_id"); id != meta->end()) {
      if (!id->is_string() || id->get_ref<const std::string&>().empty() ||
          id->get_ref<const std::string&>().size() > kMaxIdBytes) {
        return "medallion: medallion.meta.medallion_id: must be a string of 1 to " +
               std::to_string(kMaxIdBytes) + " bytes";
      }
    }
    if (const auto v = meta->find("schema_version");
        v != meta->end() && *v != json("medallion.v1")) {
      return R"(medallion: medallion.meta.schema_version: must be "medallion.v1")";
    }
    if (const auto model = meta->find("model"); model != meta->end() && !model->is_string()) {
      return "medallion: medallion.meta.model: must be a string";
    }
  }
  return {};
}

std::string check_evidence(const json& request) {
  const auto it = request.find("evidence");
  if (it == request.end()) {
    return "medallion: evidence: is required (seed 001 Evidence: session_summary, transcripts?, "
           "artefacts?)";
  }
  if (!it->is_object()) return "medallion: evidence: must be an object";
  if (it->dump().size() > kMaxJsonBytes) {
    return "medallion: evidence: must be at most " + std::to_string(kMaxJsonBytes) +
           " bytes as JSON";
  }
  for (const auto& [key, value] : it->items()) {
    if (key != "session_summary" && key != "transcripts" && key != "artefacts") {
      return "medallion: evidence." + key +
             ": not a field of seed 001 Evidence (session_summary, transcripts, artefacts)";
    }
  }
  std::string error;
  required_text(*it, "medallion: evidence", "session_summary", kMaxSummaryBytes, error);
  if (!error.empty()) return error;
  if (const auto t = it->find("transcripts"); t != it->end() && !t->is_null()) {
    if (!t->is_array() ||
        !std::all_of(t->begin(), t->end(), [](const json& s) { return s.is_string(); })) {
      return "medallion: evidence.transcripts: must be an array of strings or null";
    }
  }
  if (const auto a = it->find("artefacts"); a != it->end() && !a->is_null() && !a->is_object()) {
    return "medallion: evidence.artefacts: must be an object or null";
  }
  return {};
}

/// A stored medallion as a write sees it.
struct Stored {
  std::string ns;
  std::string status;
  json content;
  bool agent = false;
  std::int64_t version = 0;
  std::string superseded_by;
};

std::optional<Stored> load(SQLite::Database& db, const std::string& id) {
  SQLite::Statement read(db, R"sql(
SELECT s.namespace, m.status, m.content_json, a.medallion_id IS NOT NULL, coalesce(a.version, 0),
       coalesce(a.superseded_by, '')
FROM medallions m JOIN medallion_scopes s ON s.medallion_id = m.id
LEFT JOIN agent_medallions a ON a.medallion_id = m.id WHERE m.id = ?1)sql");
  read.bind(1, id);
  if (!read.executeStep()) return std::nullopt;
  return Stored{read.getColumn(0).getString(),
                read.getColumn(1).getString(),
                json::parse(read.getColumn(2).getString()),
                read.getColumn(3).getInt() != 0,
                read.getColumn(4).getInt64(),
                read.getColumn(5).getString()};
}

// An agent's medallion in a namespace the caller may write, or the precise refusal naming
// `field`, the request field that named it (id, or supersedes in a create).
Stored load_agent_medallion(SQLite::Database& db, const std::string& id, const WriteScope& scope,
                            const char* field) {
  auto stored = load(db, id);
  if (!stored || !scope.may_use(stored->ns)) {
    refuse(field, "no medallion '" + id + "' in the namespaces you may write");
  }
  if (!stored->agent) {
    refuse(field, "'" + id +
                      "' is the medallion job's: it is rebuilt from the events, which also mark "
                      "it stale; agents update and set the status of their own medallions only");
  }
  return std::move(*stored);
}

std::vector<std::string> as_set(const json& list) {
  std::vector<std::string> out;
  if (list.is_array()) {
    for (const json& v : list) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool same_scope(const json& a, const json& b) {
  return as_set(a.value("graph_nodes", json::array())) ==
             as_set(b.value("graph_nodes", json::array())) &&
         as_set(a.value("tags", json::array())) == as_set(b.value("tags", json::array()));
}

std::int64_t updated_us(const json& content) {
  return parse_rfc3339_us(content["meta"].value("updated_at", std::string())).value_or(0);
}

// The seed's list fields default to empty (pydantic default_factory=list; invariants None).
void fill_defaults(json& medallion) {
  for (const char* key : {"decisions", "open_questions"}) {
    if (!medallion.contains(key)) medallion[key] = json::array();
  }
  const std::array<std::pair<const char*, std::vector<const char*>>, 3> lists{
      {{"scope", {"graph_nodes", "tags"}},
       {"summary", {"subsystems"}},
       {"affordances", {"recommended_entry_points", "avoid_repeating"}}}};
  for (const auto& [parent, keys] : lists) {
    const auto it = medallion.find(parent);
    if (it == medallion.end() || !it->is_object()) continue;
    for (const char* key : keys) {
      if (!it->contains(key)) (*it)[key] = json::array();
    }
  }
  if (const auto it = medallion.find("affordances");
      it != medallion.end() && it->is_object() && !it->contains("invariants")) {
    (*it)["invariants"] = json();
  }
}

void validate(const json& medallion) {
  const auto errors = jobs::validate_medallion(medallion);
  if (errors.empty()) return;
  std::string all;
  for (const auto& e : errors) all += (all.empty() ? "" : "; ") + e;
  throw std::invalid_argument("medallion: medallion: not a valid seed 001 Medallion: " + all);
}

void save_evidence(SQLite::Database& db, const std::string& id, std::int64_t version,
                   const std::string& actor, std::int64_t now_us, const json& evidence) {
  SQLite::Statement insert(db,
                           "INSERT INTO medallion_evidence (medallion_id, version, actor, "
                           "recorded_us, evidence_json) VALUES (?1, ?2, ?3, ?4, ?5)");
  SQLite::bind(insert, id, version, actor, now_us, evidence.dump());
  insert.exec();
}

std::string audit_summary(const json& evidence) {
  std::string text = evidence.value("session_summary", std::string());
  if (text.size() > kAuditSummaryBytes) {
    text = std::string(utf8_prefix(text, kAuditSummaryBytes)) + "…";
  }
  return "evidence: " + text;
}

const char* status_action(const std::string& status) {
  if (status == "superseded") return "supersede";
  if (status == "stale") return "deprecate";
  return "promote";
}

json set_status(SQLite::Database& db, const std::string& id, const std::string& status,
                const std::string& superseded_by, const std::string& rationale,
                const WriteScope& scope, std::int64_t now_us, const char* id_field = "id") {
  Stored stored = load_agent_medallion(db, id, scope, id_field);
  json answer = {{"id", id},
                 {"namespace", stored.ns},
                 {"status", status},
                 {"previous_status", stored.status},
                 {"superseded_by", superseded_by.empty() ? json() : json(superseded_by)}};
  if (stored.status == status && stored.superseded_by == superseded_by) {
    answer["changed"] = false;
    return answer;
  }
  if (status == "superseded") {
    if (superseded_by == id) refuse("superseded_by", "a medallion cannot supersede itself");
    const auto newer = load(db, superseded_by);
    if (!newer || newer->ns != stored.ns) {
      refuse("superseded_by", "no medallion '" + superseded_by + "' in namespace '" + stored.ns +
                                  "' (the superseding medallion must share the namespace)");
    }
    if (!same_scope(newer->content.value("scope", json::object()),
                    stored.content.value("scope", json::object()))) {
      refuse("superseded_by", "'" + superseded_by + "' covers another scope than '" + id +
                                  "' (graph_nodes and tags must be the same sets)");
    }
    if (updated_us(newer->content) <= updated_us(stored.content)) {
      refuse("superseded_by", "'" + superseded_by + "' was not updated after '" + id +
                                  "' (a medallion is superseded by a newer one)");
    }
    if (newer->status == "superseded") {
      refuse("superseded_by", "'" + superseded_by + "' is itself superseded");
    }
  }
  json& meta = stored.content["meta"];
  meta["status"] = status;
  if (superseded_by.empty()) {
    meta["x_reflectd"].erase("superseded_by");
  } else {
    meta["x_reflectd"]["superseded_by"] = superseded_by;
  }
  SQLite::Statement update(db,
                           "UPDATE medallions SET status = ?2, content_json = ?3 WHERE id = ?1");
  update.bind(1, id);
  update.bind(2, status);
  update.bind(3, stored.content.dump());
  update.exec();
  SQLite::Statement mark(db,
                         "UPDATE agent_medallions SET superseded_by = ?2 WHERE medallion_id = ?1");
  mark.bind(1, id);
  if (superseded_by.empty()) {
    mark.bind(2);
  } else {
    mark.bind(2, superseded_by);
  }
  mark.exec();
  store::AuditLog(db).append(
      "medallion", id, status_action(status), scope.actor, now_us, rationale,
      json{{"status", stored.status},
           {"superseded_by", stored.superseded_by.empty() ? json() : json(stored.superseded_by)}}
          .dump());
  answer["changed"] = true;
  return answer;
}

json create(SQLite::Database& db, const MedallionWrite& w, const WriteScope& scope,
            std::int64_t now_us) {
  if (!scope.may_use(w.ns)) {
    refuse("namespace", "'" + w.ns + "' is not a namespace you may write");
  }
  std::string id = w.id;
  if (id.empty()) {
    SQLite::Statement random(db, "SELECT 'm-' || lower(hex(randomblob(8)))");
    random.executeStep();
    id = random.getColumn(0).getString();
  }
  if (id.rfind(kJobIdPrefix, 0) == 0) {
    refuse("medallion.meta.medallion_id",
           "ids starting \"med:\" are the medallion job's; choose another id or leave it out");
  }
  if (load(db, id)) refuse("medallion.meta.medallion_id", "'" + id + "' exists; update it");
  const json given_meta = w.medallion.value("meta", json::object());
  if (given_meta.contains("status") && given_meta["status"] != json("active")) {
    refuse("medallion.meta.status",
           "a new medallion starts active (seed 001); change it "
           "afterwards with action set_status");
  }
  const std::string stamp = format_rfc3339_us(now_us);
  json meta = {{"medallion_id", id},
               {"schema_version", "medallion.v1"},
               {"model", given_meta.value("model", "agent:" + scope.actor)},
               {"created_at", stamp},
               {"updated_at", stamp},
               {"knowledge_min_ts", given_meta.value("knowledge_min_ts", json())},
               {"knowledge_max_ts", given_meta.value("knowledge_max_ts", json())},
               {"status", "active"},
               {"x_reflectd", {{"namespace", w.ns}, {"written_by", scope.actor}, {"version", 1}}}};
  json medallion = w.medallion;
  medallion["meta"] = std::move(meta);
  fill_defaults(medallion);
  validate(medallion);
  store::put_medallion(db, medallion, w.ns, store::kAgentConfigHash, "");
  SQLite::Statement own(db,
                        "INSERT INTO agent_medallions (medallion_id, namespace, author, version, "
                        "sensitivity) VALUES (?1, ?2, ?3, 1, ?4)");
  own.bind(1, id);
  own.bind(2, w.ns);
  own.bind(3, scope.actor);
  own.bind(4, w.sensitivity.empty() ? std::string("public") : w.sensitivity);
  own.exec();
  save_evidence(db, id, 1, scope.actor, now_us, w.evidence);
  store::AuditLog(db).append("medallion", id, "create", scope.actor, now_us,
                             audit_summary(w.evidence));
  json answer = {{"id", id},
                 {"namespace", w.ns},
                 {"status", "active"},
                 {"version", 1},
                 {"created_at", stamp},
                 {"updated_at", stamp},
                 {"scope", medallion["scope"]},
                 {"superseded", json()}};
  if (!w.supersedes.empty()) {
    set_status(db, w.supersedes, "superseded", id, "superseded by " + id + " (create)", scope,
               now_us, "supersedes");
    answer["superseded"] = w.supersedes;
  }
  return answer;
}

json update(SQLite::Database& db, const MedallionWrite& w, const WriteScope& scope,
            std::int64_t now_us) {
  Stored stored = load_agent_medallion(db, w.id, scope, "id");
  const std::string previous_content = stored.content.dump();
  json medallion = stored.content;
  for (const auto& [key, value] : w.medallion.items()) {
    if (key != "meta") medallion[key] = value;
  }
  json& meta = medallion["meta"];
  if (const auto given = w.medallion.find("meta"); given != w.medallion.end()) {
    if (given->contains("medallion_id") && (*given)["medallion_id"] != json(w.id)) {
      refuse("medallion.meta.medallion_id", "must be the id updated, '" + w.id + "'");
    }
    if (given->contains("status") && (*given)["status"] != json(stored.status)) {
      refuse("medallion.meta.status", "is '" + stored.status +
                                          "': status persists through updates (seed 001); "
                                          "change it with action set_status");
    }
    for (const char* key : {"model", "knowledge_min_ts", "knowledge_max_ts"}) {
      if (given->contains(key)) meta[key] = (*given)[key];
    }
  }
  const std::int64_t updated = std::max(now_us, updated_us(stored.content) + 1);
  meta["updated_at"] = format_rfc3339_us(updated);
  const std::int64_t version = stored.version + 1;
  meta["x_reflectd"]["version"] = version;
  meta["x_reflectd"]["updated_by"] = scope.actor;
  fill_defaults(medallion);
  validate(medallion);
  store::put_medallion(db, medallion, stored.ns, store::kAgentConfigHash, previous_content);
  SQLite::Statement bump(db,
                         "UPDATE agent_medallions SET version = ?2, sensitivity = "
                         "coalesce(?3, sensitivity) WHERE medallion_id = ?1");
  bump.bind(1, w.id);
  bump.bind(2, version);
  if (w.sensitivity.empty()) {
    bump.bind(3);
  } else {
    bump.bind(3, w.sensitivity);
  }
  bump.exec();
  save_evidence(db, w.id, version, scope.actor, now_us, w.evidence);
  store::AuditLog(db).append(
      "medallion", w.id, "revise", scope.actor, now_us, audit_summary(w.evidence),
      json{{"version", stored.version}, {"updated_at", stored.content["meta"]["updated_at"]}}
          .dump());
  return {{"id", w.id},
          {"namespace", stored.ns},
          {"status", stored.status},
          {"version", version},
          {"created_at", meta["created_at"]},
          {"updated_at", meta["updated_at"]},
          {"scope", medallion["scope"]}};
}

}  // namespace

bool is_medallion_write(const json& request) {
  const auto action = request.find("action");
  return action != request.end() &&
         (*action == "create" || *action == "update" || *action == "set_status");
}

std::optional<MedallionWrite> parse_medallion_write(const json& request, std::string& error) {
  MedallionWrite w;
  const std::string action = request.value("action", std::string());
  if (action == "create") {
    w.action = MedallionAction::kCreate;
    w.ns = required_text(request, "medallion", "namespace", kMaxNamespaceBytes, error);
  } else if (action == "update") {
    w.action = MedallionAction::kUpdate;
    w.id = required_text(request, "medallion", "id", kMaxIdBytes, error);
  } else if (action == "set_status") {
    w.action = MedallionAction::kSetStatus;
    w.id = required_text(request, "medallion", "id", kMaxIdBytes, error);
    if (error.empty()) w.status = required_text(request, "medallion", "status", 16, error);
    if (error.empty() && w.status != "active" && w.status != "stale" && w.status != "superseded") {
      error = R"(medallion: status: must be "active", "stale" or "superseded")";
    }
    if (error.empty() && w.status == "superseded") {
      w.superseded_by = required_text(request, "medallion", "superseded_by", kMaxIdBytes, error);
    } else if (error.empty() && request.contains("superseded_by")) {
      error = "medallion: superseded_by: only with status superseded";
    }
    if (error.empty()) {
      w.rationale = required_text(request, "medallion", "rationale", kMaxRationaleBytes, error);
    }
    if (!error.empty()) return std::nullopt;
    return w;
  } else {
    error = R"(medallion: action: must be "create", "update" or "set_status")";
    return std::nullopt;
  }
  if (!error.empty()) return std::nullopt;
  const auto m = request.find("medallion");
  if (m == request.end()) {
    error =
        "medallion: medallion: is required (seed 001 Medallion: scope, summary, "
        "affordances, decisions, open_questions, meta)";
    return std::nullopt;
  }
  error = check_medallion_shape(*m, w.action == MedallionAction::kCreate);
  if (error.empty()) error = check_evidence(request);
  if (!error.empty()) return std::nullopt;
  w.medallion = *m;
  w.evidence = request["evidence"];
  if (const auto level = request.find("sensitivity"); level != request.end()) {
    static constexpr std::array<std::string_view, 5> kLevels{"public", "low", "medium", "high",
                                                             "hyper"};
    if (!level->is_string() ||
        std::find(kLevels.begin(), kLevels.end(), level->get<std::string>()) == kLevels.end()) {
      error = R"(medallion: sensitivity: must be "public", "low", "medium", "high" or "hyper" )"
              "(seed 002)";
      return std::nullopt;
    }
    w.sensitivity = level->get<std::string>();
  }
  if (w.action == MedallionAction::kCreate) {
    w.id = w.medallion.value("meta", json::object()).value("medallion_id", std::string());
    if (request.contains("supersedes")) {
      w.supersedes = required_text(request, "medallion", "supersedes", kMaxIdBytes, error);
      if (!error.empty()) return std::nullopt;
    }
  }
  return w;
}

json write_medallion(SQLite::Database& db, const MedallionWrite& write, const WriteScope& scope,
                     std::int64_t now_us) {
  switch (write.action) {
    case MedallionAction::kCreate: return create(db, write, scope, now_us);
    case MedallionAction::kUpdate: return update(db, write, scope, now_us);
    case MedallionAction::kSetStatus:
      return set_status(db, write.id, write.status, write.superseded_by, write.rationale, scope,
                        now_us);
  }
  return {};
}

}  // namespace reflectd::memory_ops
