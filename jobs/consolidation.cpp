#include "jobs/consolidation.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/sha256.hpp"
#include "common/utf8.hpp"
#include "jobs/commit_decisions.hpp"
#include "jobs/conversation_decisions.hpp"
#include "jobs/decision_extraction.hpp"
#include "jobs/entity_summaries.hpp"
#include "jobs/event_json.hpp"
#include "jobs/job_state.hpp"
#include "store/audit_log.hpp"
#include "store/extracted_decisions.hpp"

namespace reflectd::jobs {
namespace {

using nlohmann::json;

constexpr const char* kJob = "consolidate";
constexpr const char* kActor = "job:consolidate";
constexpr std::size_t kMaxEvidenceIdsListed = 100;
constexpr std::size_t kMaxSupportIdsListed = 200;

// `ids` as a JSON array, the text nlohmann::json(ids).dump() gives ("[1,2,3]"), without
// building a json value per id: an observation's 200 ids were ~45,000 instructions that way.
std::string integer_array_json(std::span<const std::int64_t> ids) {
  std::string out = "[";
  out.reserve(2 + ids.size() * 21);
  std::array<char, 24> digits{};
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    const auto [end, ec] = std::to_chars(digits.data(), digits.data() + digits.size(), ids[i]);
    out.append(digits.data(), end);
  }
  out += ']';
  return out;
}
// Every weighted event of a target becomes evidence of its stream.
constexpr const char* kBackfill =
    "INSERT OR IGNORE INTO knowledge_evidence (decision_id, event_seq, ts_us, weight) SELECT ?1, "
    "t.seq, "
    "e.ts_us, t.weight FROM event_targets t JOIN events e ON e.seq = t.seq WHERE t.namespace = ?2 "
    "AND "
    "t.target = ?3 AND t.weight > 0";

std::string first_line(std::string_view text, std::size_t max_bytes) {
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    auto line = text.substr(start, end - start);
    const auto a = line.find_first_not_of(" \t\r");
    if (a != std::string_view::npos) {
      line = line.substr(a, line.find_last_not_of(" \t\r") - a + 1);
      return std::string(utf8_prefix(line, max_bytes));
    }
    start = end + 1;
  }
  return {};
}

// The text after "<label>:" at the start of a line, e.g. "Problem:" in libzmq's convention.
std::string labelled_line(std::string_view text, std::string_view label) {
  for (std::size_t start = 0; start < text.size();) {
    const auto end = std::min(text.find('\n', start), text.size());
    auto line = text.substr(start, end - start);
    if (line.starts_with(label)) return first_line(line.substr(label.size()), 300);
    start = end + 1;
  }
  return {};
}

std::string string_field(const json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

bool truthy(const json& object, const char* key) {
  if (!object.is_object()) return false;
  const auto it = object.find(key);
  if (it == object.end()) return false;
  if (it->is_boolean()) return it->get<bool>();
  if (it->is_number()) return it->get<double>() > 0.7;
  return false;
}

std::string conventional_scope(std::string_view content) {
  return std::string(conventional_commit_scope(first_line(content, 200)));
}

// What consolidation reads of an event's `context` and `entities` (both JSON text).
struct EventFields {
  std::string target;              // context.target, when a string
  std::vector<std::string> files;  // context.files' strings, then the entities' "file:" paths
  bool success = false;            // truthy(context, "success")
  bool ends_trajectory = false;    // context has "exit_status" or "submission"
  bool merge = false;              // context.merge is true (a merge commit)
};

// Reads EventFields (see jobs/event_json.hpp for why simdjson, and the meaning it keeps).
class EventFieldReader {
 public:
  EventFields read(const std::optional<std::string>& context,
                   const std::optional<std::string>& entities) {
    EventFields f;
    if (context) read_context(*context, f);
    if (entities) read_entities(*entities, f);
    return f;
  }

 private:
  void read_context(const std::string& text, EventFields& f) {
    const auto doc = json_.parse(text);
    if (!doc) {
      const json j = json::parse(text, nullptr, false);
      f.target = string_field(j, "target");
      f.success = truthy(j, "success");
      f.ends_trajectory = j.is_object() && (j.contains("exit_status") || j.contains("submission"));
      f.merge = j.is_object() && j.value("merge", false) == true;
      if (j.is_object()) {
        if (const auto files = j.find("files"); files != j.end() && files->is_array()) {
          for (const auto& file : *files) {
            if (file.is_string()) f.files.push_back(file.get<std::string>());
          }
        }
      }
      return;
    }
    simdjson::dom::object object;
    if (doc->get_object().get(object) != simdjson::SUCCESS) return;
    std::string_view text_value;
    if (const auto target = last_field(object, "target");
        target && target->get_string().get(text_value) == simdjson::SUCCESS) {
      f.target = std::string(text_value);
    }
    if (const auto success = last_field(object, "success")) {
      bool flag = false;
      double number = 0;
      if (success->get_bool().get(flag) == simdjson::SUCCESS) {
        f.success = flag;
      } else if (success->is_number() && success->get_double().get(number) == simdjson::SUCCESS) {
        f.success = number > 0.7;
      }
    }
    f.ends_trajectory = last_field(object, "exit_status") || last_field(object, "submission");
    if (const auto merge = last_field(object, "merge")) {
      bool flag = false;
      f.merge = merge->get_bool().get(flag) == simdjson::SUCCESS && flag;
    }
    simdjson::dom::array list;
    if (const auto files = last_field(object, "files");
        files && files->get_array().get(list) == simdjson::SUCCESS) {
      for (const simdjson::dom::element file : list) {
        if (file.get_string().get(text_value) == simdjson::SUCCESS) {
          f.files.emplace_back(text_value);
        }
      }
    }
  }

  void read_entities(const std::string& text, EventFields& f) {
    constexpr std::string_view kFile = "file:";
    const auto doc = json_.parse(text);
    if (!doc) {
      const json j = json::parse(text, nullptr, false);
      if (!j.is_array()) return;
      for (const auto& e : j) {
        if (e.is_string() && e.get_ref<const std::string&>().starts_with(kFile)) {
          f.files.push_back(e.get_ref<const std::string&>().substr(kFile.size()));
        }
      }
      return;
    }
    simdjson::dom::array list;
    if (doc->get_array().get(list) != simdjson::SUCCESS) return;
    std::string_view entity;
    for (const simdjson::dom::element e : list) {
      if (e.get_string().get(entity) == simdjson::SUCCESS && entity.starts_with(kFile)) {
        f.files.emplace_back(entity.substr(kFile.size()));
      }
    }
  }

  EventJsonReader json_;
};

// Most common top-level directory of the event's files (ties: the smallest name).
std::string module_of_files(const std::vector<std::string>& files) {
  std::map<std::string_view, int> counts;
  for (std::string_view path : files) {
    while (path.starts_with("/")) path.remove_prefix(1);
    const auto slash = path.find('/');
    if (slash == std::string_view::npos || slash == 0) continue;
    ++counts[path.substr(0, slash)];
  }
  std::string_view best;
  int best_count = 0;
  for (const auto& [module, count] : counts) {
    if (count > best_count) {
      best = module;
      best_count = count;
    }
  }
  return std::string(best);
}

std::string valid_target(const std::string& target) {
  return target.size() >= 3 ? target : std::string{};
}

struct Totals {
  std::int64_t events_processed = 0;
  std::int64_t observations_created = 0;
  std::int64_t observations_reinforced = 0;
  std::int64_t streams_created = 0;
  std::int64_t streams_reinforced = 0;
  std::int64_t streams_promoted = 0;
  std::int64_t proposals_accepted = 0;
  std::int64_t procedures_distilled = 0;
  std::int64_t competences = 0;
  std::int64_t decisions_extracted = 0;
  std::int64_t decisions_falsified = 0;
  std::int64_t agent_records_reinforced = 0;
  std::int64_t agent_records_promoted = 0;
};

struct OpenTrajectory {
  std::string id;
  std::int64_t last_ts_us = 0;
  std::string target;
};

class Consolidator {
 public:
  Consolidator(JobContext& ctx, const ConsolidationParams& params)
      : ctx_(ctx),
        p_(params),
        db_(ctx.db),
        state_(db_, kJob),
        audit_(db_),
        decisions_(db_),
        summary_marks_(db_),
        question_load_(db_,
                       "SELECT seq, agent_id FROM unanswered_questions WHERE namespace = ?1 AND "
                       "trajectory_id = ?2"),
        question_save_(db_,
                       "INSERT OR REPLACE INTO unanswered_questions (namespace, trajectory_id, "
                       "seq, agent_id) VALUES (?1, ?2, ?3, ?4)"),
        question_clear_(db_,
                        "DELETE FROM unanswered_questions WHERE namespace = ?1 AND "
                        "trajectory_id = ?2"),
        read_events_(db_,
                     "SELECT seq, kind, ts_us, content, context, entities, episode_id, uid, "
                     "coalesce(agent_id, '') "
                     "FROM events WHERE namespace = ?1 AND seq > ?2 AND status = 'active' "
                     "ORDER BY seq LIMIT ?3"),
        // A plain INSERT: each event is consolidated once (its row commits with the
        // watermark). OR REPLACE, which could delete a row, made SQLite give every insert a
        // statement journal (a copy of each page it changes, 3% of a +10,000 run at 1M).
        insert_target_(db_,
                       "INSERT INTO event_targets (seq, namespace, trajectory_id, target, weight) "
                       "VALUES (?1, ?2, ?3, ?4, ?5)"),
        trajectory_target_(db_,
                           "SELECT target FROM event_targets WHERE namespace = ?1 AND "
                           "trajectory_id = ?2 AND target IS NOT NULL ORDER BY seq DESC LIMIT 1"),
        store_totals_(db_,
                      "INSERT INTO consolidation_targets (namespace, target, weight, events, "
                      "commits, errors, successes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
                      "ON CONFLICT (namespace, target) DO UPDATE SET weight = excluded.weight, "
                      "events = excluded.events, commits = excluded.commits, errors = "
                      "excluded.errors, successes = excluded.successes"),
        insert_problem_(db_,
                        "INSERT OR IGNORE INTO problem_occurrences (namespace, signature, seq, "
                        "trajectory_id, target, ts_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"),
        stream_totals_(
            db_,
            "SELECT weight, commits, errors, successes, events FROM consolidation_targets "
            "WHERE namespace = ?1 AND target = ?2"),
        stream_load_(
            db_,
            "SELECT k.phase, k.status, k.scope, k.hit_count, coalesce(k.last_hit_us, 0), "
            "k.vitality, k.confidence, s.evidence, s.first_ts_us, s.last_ts_us, s.last_seq, "
            "s.gap_squares_hi, s.gap_squares_lo, s.solutions, s.unique_contexts FROM knowledge k "
            "LEFT JOIN consolidation_streams s ON s.decision_id = k.decision_id "
            "WHERE k.decision_id = ?1"),
        stream_store_(
            db_,
            "INSERT OR REPLACE INTO consolidation_streams (decision_id, evidence, first_ts_us, "
            "last_ts_us, last_seq, gap_squares_hi, gap_squares_lo, solutions, unique_contexts) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"),
        stream_create_(
            db_,
            "INSERT INTO knowledge (decision_id, namespace, kind, target, title, rationale, "
            "status, provenance, keywords, salience_ref_us, first_seen_us, last_seen_us, "
            "updated_us) VALUES (?1, ?2, 'proposal', ?3, ?4, 'pending evidence', 'draft', "
            "'internal', ?5, ?7, ?7, ?7, ?6)"),
        stream_backfill_(
            db_, std::string(kBackfill) + " AND t.seq >= ?4 AND t.seq <= ?5 AND t.seq < ?6"),
        agent_records_(db_,
                       "SELECT decision_id, source_event_seq, coalesce(ended_seq, "
                       "9223372036854775807) FROM knowledge WHERE namespace = ?1 AND target = ?2 "
                       "AND provenance = 'external' AND source_event_seq IS NOT NULL "
                       "ORDER BY decision_id"),
        stream_evidence_all_(
            db_,
            "SELECT ts_us, event_seq FROM knowledge_evidence WHERE decision_id = ?1 "
            "ORDER BY ts_us, event_seq"),
        evidence_insert_(
            db_,
            "INSERT OR IGNORE INTO knowledge_evidence (decision_id, event_seq, ts_us, weight) "
            "VALUES (?1, ?2, ?3, ?4)"),
        // The neighbours of (ts, seq) in the stream's time order (index knowledge_evidence_time).
        evidence_before_(
            db_,
            "SELECT ts_us FROM knowledge_evidence WHERE decision_id = ?1 AND ts_us <= ?2 "
            "AND (ts_us < ?2 OR event_seq < ?3) ORDER BY ts_us DESC, event_seq DESC LIMIT 1"),
        evidence_after_(
            db_,
            "SELECT ts_us FROM knowledge_evidence WHERE decision_id = ?1 AND ts_us >= ?2 "
            "AND (ts_us > ?2 OR event_seq > ?3) ORDER BY ts_us, event_seq LIMIT 1"),
        evidence_newest_(db_,
                         "SELECT event_seq FROM knowledge_evidence WHERE decision_id = ?1 "
                         "ORDER BY event_seq DESC LIMIT ?2"),
        stream_solutions_latest_(
            db_,
            "SELECT k.ts_us, k.event_seq FROM knowledge_evidence k JOIN events e ON "
            "e.seq = k.event_seq WHERE k.decision_id = ?1 AND e.content LIKE "
            "'%Solution:%' ORDER BY k.ts_us DESC, k.event_seq DESC LIMIT 5"),
        stream_contexts_(
            db_,
            "SELECT count(DISTINCT trajectory_id) FROM event_targets WHERE namespace = ?1 "
            "AND target = ?2 AND weight > 0 AND seq <= ?3 AND seq >= ?4"),
        stream_context_seen_(db_,
                             "SELECT 1 FROM event_targets WHERE namespace = ?1 AND target = ?2 AND "
                             "trajectory_id = ?3 AND weight > 0 AND seq <= ?4 AND seq >= ?5 "
                             "LIMIT 1"),
        stream_procedure_(
            db_,
            "SELECT procedural FROM trajectory_outcomes WHERE namespace = ?1 AND target = ?2 "
            "AND success = 1 ORDER BY final_seq DESC LIMIT 1"),
        stream_update_(db_, R"sql(
UPDATE knowledge SET rationale = ?2, status = ?3, phase = ?4, vitality = ?5, evidence_event_ids = ?6,
  consequences = ?7, procedural = ?8, frequency = ?9, unique_contexts = ?10, confidence = ?11,
  confidence_base = ?11, stability_score = ?12, reinforcement_density = ?13, coverage = ?14,
  lifetime_days = ?15, estimated_removal_cost = ?16, estimated_utility = ?17, acceptance_score = ?18,
  first_seen_us = ?19, last_seen_us = ?20, updated_us = ?21
WHERE decision_id = ?1)sql"),
        agent_stream_update_(db_, R"sql(
UPDATE knowledge SET phase = ?2, vitality = ?3, frequency = ?4, unique_contexts = ?5,
  stability_score = ?6, reinforcement_density = ?7, coverage = ?8, lifetime_days = ?9,
  estimated_removal_cost = ?10, estimated_utility = ?11, acceptance_score = ?12,
  first_seen_us = ?13, last_seen_us = ?14, updated_us = ?15
WHERE decision_id = ?1)sql"),
        event_content_(db_, "SELECT content FROM events WHERE seq = ?1"),
        trajectory_steps_(
            db_,
            "SELECT e.seq, e.kind, e.content, e.context, e.ts_us FROM event_targets t "
            "JOIN events e ON e.seq = t.seq WHERE t.namespace = ?1 AND "
            "t.trajectory_id = ?2 AND t.seq <= ?3 ORDER BY t.seq"),
        outcome_previous_(db_,
                          "SELECT success, tool_sequence, final_seq FROM trajectory_outcomes "
                          "WHERE namespace = ?1 AND trajectory_id = ?2"),
        outcome_upsert_(db_,
                        "INSERT OR REPLACE INTO trajectory_outcomes (namespace, trajectory_id, "
                        "target, success, tool_sequence, procedural, final_seq, final_ts_us) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
        // Index-only (trajectory_outcomes_successes, migration 23).
        competence_runs_(db_,
                         "SELECT final_seq, target, final_ts_us FROM trajectory_outcomes WHERE "
                         "namespace = ?1 AND tool_sequence = ?2 AND success = 1 ORDER BY "
                         "final_ts_us, final_seq"),
        pattern_rows_(db_,
                      "SELECT seq, trajectory_id, ts_us, target FROM problem_occurrences WHERE "
                      "namespace = ?1 AND signature = ?2 AND seq > ?3"),
        pattern_totals_(db_,
                        "SELECT occurrences, max_seq, last_ts_us, trajectories, "
                        "newest_floor_seq FROM problem_patterns WHERE namespace = ?1 AND "
                        "signature = ?2"),
        pattern_targets_(db_,
                         "SELECT target, occurrences FROM problem_pattern_targets WHERE "
                         "namespace = ?1 AND signature = ?2"),
        pattern_newest_(db_,
                        "SELECT seq FROM problem_occurrences WHERE namespace = ?1 AND "
                        "signature = ?2 AND seq <= ?3 ORDER BY seq DESC LIMIT ?4"),
        pattern_trajectory_seen_(
            db_,
            "SELECT 1 FROM problem_occurrences WHERE namespace = ?1 AND signature = ?2 AND "
            "seq < ?4 AND seq >= (SELECT min(seq) FROM event_targets WHERE namespace = ?1 AND "
            "trajectory_id = ?3) AND trajectory_id = ?3 LIMIT 1"),
        save_pattern_(db_,
                      "INSERT INTO problem_patterns (namespace, signature, occurrences, max_seq, "
                      "last_ts_us, trajectories, newest_floor_seq) VALUES (?1, ?2, ?3, ?4, ?5, "
                      "?6, ?7) ON CONFLICT (namespace, signature) DO UPDATE SET occurrences = "
                      "excluded.occurrences, max_seq = excluded.max_seq, last_ts_us = "
                      "excluded.last_ts_us, trajectories = excluded.trajectories, "
                      "newest_floor_seq = excluded.newest_floor_seq"),
        save_pattern_target_(db_,
                             "INSERT INTO problem_pattern_targets (namespace, signature, target, "
                             "occurrences) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (namespace, "
                             "signature, target) DO UPDATE SET occurrences = excluded.occurrences"),
        pattern_head_(db_,
                      "SELECT seq, ts_us, trajectory_id FROM problem_occurrences WHERE "
                      "namespace = ?1 AND signature = ?2 AND ts_us <= ?3 ORDER BY ts_us, seq"),
        observation_first_(db_,
                           "SELECT first_detected_us, support_count, supporting_event_ids, "
                           "signature FROM observations WHERE observation_id = ?1"),
        observation_support_(db_,
                             "SELECT support_count FROM observations WHERE observation_id = ?1"),
        observation_upsert_(db_, R"sql(
INSERT INTO observations (observation_id, namespace, observation_type, signature, target, title, text,
  supporting_event_ids, support_count, trajectory_count, success_count, confidence, importance,
  times_reinforced, first_detected_us, last_reinforced_us)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, min(0.95, 0.5 + 0.05 * ?9),
  min(1.0, log10(1 + ?9) / 2.0), ?12, ?13, ?14)
ON CONFLICT (observation_id) DO UPDATE SET target = excluded.target, title = excluded.title,
  text = excluded.text,
  supporting_event_ids = excluded.supporting_event_ids, support_count = excluded.support_count,
  trajectory_count = excluded.trajectory_count, success_count = excluded.success_count,
  confidence = excluded.confidence, importance = excluded.importance,
  times_reinforced = excluded.times_reinforced, last_reinforced_us = excluded.last_reinforced_us,
  first_detected_us = min(first_detected_us, excluded.first_detected_us))sql") {}

  json run() {
    now_ = ctx_.clock.now_us();
    std::vector<std::string> namespaces;
    if (!ctx_.ns.empty()) {
      namespaces.push_back(ctx_.ns);
    } else {
      namespaces = event_namespaces(db_);
    }
    for (const auto& ns : namespaces) {
      while (consolidate_chunk(ns)) {
      }
    }
    json result = {{"events_processed", totals_.events_processed},
                   {"observations_created", totals_.observations_created},
                   {"observations_reinforced", totals_.observations_reinforced},
                   {"skipped", totals_.events_processed == 0},
                   {"skip_reason", totals_.events_processed == 0 ? json("no new events") : json()},
                   {"streams_created", totals_.streams_created},
                   {"streams_reinforced", totals_.streams_reinforced},
                   {"streams_promoted", totals_.streams_promoted},
                   {"proposals_accepted", totals_.proposals_accepted},
                   {"procedures_distilled", totals_.procedures_distilled},
                   {"competences", totals_.competences},
                   {"decisions_extracted", totals_.decisions_extracted},
                   {"decisions_falsified", totals_.decisions_falsified},
                   {"agent_records_reinforced", totals_.agent_records_reinforced},
                   {"agent_records_promoted", totals_.agent_records_promoted}};
    return result;
  }

 private:
  struct Outcome {
    std::string trajectory_id;
    std::string target;
    bool success = false;
    std::int64_t final_seq = 0;
    std::int64_t final_ts_us = 0;
  };

  // One chunk of one namespace in one transaction. Returns false when nothing was left.
  // Promotion and acceptance are decided at each evidence event (evaluate()), never at chunk
  // ends, so like cluster a chunk ends at the next event when ingest waits at the write gate:
  // where chunks end does not change the tables.
  bool consolidate_chunk(const std::string& ns) {
    ctx_.cancel.check();
    WriteTransaction transaction(ctx_);
    chunk_totals_.clear();
    chunk_streams_.clear();
    chunk_agent_targets_.clear();
    chunk_agent_streams_.clear();
    chunk_questions_.clear();
    const std::int64_t watermark = std::stoll(state_.get(ns, "watermark").value_or("0"));
    OpenTrajectory open;
    if (auto text = state_.get(ns, "open_trajectory")) {
      const auto j = json::parse(*text);
      open = {j.value("id", ""), j.value("last_ts_us", std::int64_t{0}), j.value("target", "")};
    }
    read_events_.reset();
    read_events_.bind(1, ns);
    read_events_.bind(2, static_cast<std::int64_t>(watermark));
    read_events_.bind(3, static_cast<std::int64_t>(p_.chunk_events));
    std::int64_t last_seq = watermark;
    std::map<std::string, std::int64_t> touched_signatures;  // -> earliest ts_us in the chunk
    bool yielded = false;
    std::vector<Outcome> outcomes;
    std::map<std::string, std::string> episode_targets;
    std::int64_t processed = 0;
    while (read_events_.executeStep()) {
      const std::int64_t seq = read_events_.getColumn(0).getInt64();
      const std::string kind = read_events_.getColumn(1).getString();
      const std::int64_t ts = read_events_.getColumn(2).getInt64();
      const std::string content = read_events_.getColumn(3).getString();
      const EventFields fields = field_reader_.read(column_text(read_events_.getColumn(4)),
                                                    column_text(read_events_.getColumn(5)));
      const std::string episode =
          read_events_.getColumn(6).isNull() ? "" : read_events_.getColumn(6).getString();
      last_seq = seq;
      ++processed;

      // 1. Trajectory.
      std::string trajectory;
      std::string* trajectory_target = nullptr;
      if (!episode.empty()) {
        trajectory = "ep:" + episode;
        auto [it, inserted] = episode_targets.try_emplace(trajectory);
        if (inserted) it->second = stored_trajectory_target(ns, trajectory);
        trajectory_target = &it->second;
      } else {
        if (open.id.empty() || kind == "prompt" || kind == "task" ||
            ts - open.last_ts_us > p_.gap_us) {
          open = {"tr:" + std::to_string(seq), ts, ""};
        }
        open.last_ts_us = ts;
        trajectory = open.id;
        trajectory_target = &open.target;
      }
      // 2. Target.
      std::string own = valid_target(fields.target);
      if (own.empty()) own = valid_target(conventional_scope(content));
      if (own.empty()) own = valid_target(module_of_files(fields.files));
      if (!own.empty()) *trajectory_target = own;
      const std::string target = own.empty() ? *trajectory_target : own;
      // 3. Evidence weight.
      const bool success = kind == "result" && fields.success;
      const std::string problem = kind == "error" ? content : labelled_line(content, "Problem:");
      const bool problem_solution = !labelled_line(content, "Problem:").empty() &&
                                    !labelled_line(content, "Solution:").empty();
      const double weight =
          weight_of(kind, success) + (problem_solution ? p_.weight_problem_solution : 0.0);
      insert_target_.reset();
      insert_target_.bind(1, static_cast<std::int64_t>(seq));
      insert_target_.bind(2, ns);
      insert_target_.bind(3, trajectory);
      if (target.empty()) {
        insert_target_.bind(4);
      } else {
        insert_target_.bind(4, target);
      }
      insert_target_.bind(5, weight);
      insert_target_.exec();
      if (!target.empty() && weight > 0) {
        TargetTotals& totals = totals_of(ns, target);
        // Summed in seq order, like the SQL `weight = weight + ?` it replaced: the same doubles.
        totals.weight += weight;
        ++totals.events;
        totals.commits += kind == "commit_change" ? 1 : 0;
        totals.errors += kind == "error" ? 1 : 0;
        totals.successes += success ? 1 : 0;
        totals.dirty = true;
        add_evidence(ns, target, totals, {seq, ts, weight, &trajectory, &content});
      }
      // 4. Recurring problems.
      if (!problem.empty()) {
        const std::string signature = problem_signature(problem);
        if (!signature.empty()) {
          insert_problem_.reset();
          insert_problem_.bind(1, ns);
          insert_problem_.bind(2, signature);
          insert_problem_.bind(3, static_cast<std::int64_t>(seq));
          insert_problem_.bind(4, trajectory);
          if (target.empty()) {
            insert_problem_.bind(5);
          } else {
            insert_problem_.bind(5, target);
          }
          insert_problem_.bind(6, static_cast<std::int64_t>(ts));
          insert_problem_.exec();
          const auto [touched, first] = touched_signatures.try_emplace(signature, ts);
          if (!first) touched->second = std::min(touched->second, ts);
        }
      }
      // 5. Decisions stated in the message, and reverts of them.
      if (decide_from_message(ns, kind, content, fields, target,
                              read_events_.getColumn(7).getString(),
                              read_events_.getColumn(8).getString(), seq, ts)) {
        mark_decision_targets(ns);
      }
      // 6. A question asked, or the one pending in the trajectory answered.
      track_question(ns, trajectory, seq, kind, content, read_events_.getColumn(8).getString());
      // 7. End of a trajectory.
      if (kind == "result" && fields.ends_trajectory) {
        outcomes.push_back({trajectory, target, fields.success, seq, ts});
      }
      // Ingest waits for the lock: end the chunk here (chunk ends do not change results).
      if (transaction.should_yield()) {
        yielded = true;
        break;
      }
    }
    read_events_.reset();
    if (processed == 0) return false;

    for (const Outcome& outcome : outcomes) {
      record_outcome(ns, outcome);
      // The stream shows its target's latest procedure.
      if (!outcome.target.empty()) stream_of(ns, outcome.target).dirty = true;
    }
    for (auto& [target, totals] : chunk_totals_) {
      if (totals.dirty) store_totals(ns, target, totals);
    }
    store_questions(ns);
    for (auto& [target, stream] : chunk_streams_) {
      if (stream.active && stream.dirty) write_stream(ns, target, stream);
    }
    for (auto& [id, stream] : chunk_agent_streams_) {
      if (stream.active && stream.dirty) write_agent_stream(stream);
    }
    for (const auto& [signature, earliest_ts] : touched_signatures) {
      update_pattern(ns, signature, earliest_ts);
    }

    state_.set(ns, "watermark", std::to_string(last_seq));
    state_.set(
        ns, "open_trajectory",
        json{{"id", open.id}, {"last_ts_us", open.last_ts_us}, {"target", open.target}}.dump());
    ctx_.cancel.check();  // A cancelled run must not commit half of its last chunk.
    transaction.commit();
    totals_.events_processed += processed;
    return yielded || processed == p_.chunk_events;
  }

  double weight_of(const std::string& kind, bool success) const {
    if (kind == "commit_change") return p_.weight_commit_change;
    if (kind == "decision") return p_.weight_decision;
    if (kind == "error") return p_.weight_error;
    if (kind == "result") return success ? p_.weight_result_success : p_.weight_result_other;
    if (kind == "call") return p_.weight_call;
    if (kind == "task") return p_.weight_task;
    if (kind == "prompt") return p_.weight_prompt;
    return 0.0;
  }

  std::string stored_trajectory_target(const std::string& ns, const std::string& trajectory) {
    trajectory_target_.reset();
    trajectory_target_.bind(1, ns);
    trajectory_target_.bind(2, trajectory);
    std::string target;
    if (trajectory_target_.executeStep()) target = trajectory_target_.getColumn(0).getString();
    trajectory_target_.reset();
    return target;
  }

  // A finished trajectory: its tool sequence, and for a success its procedure (seed 000
  // ProceduralContent) and the competence (seed 002) of its tool sequence, updated per
  // outcome, not per chunk: an outcome recorded again for the same
  // trajectory (a repeated episode) can take a success away from a sequence, so the counts
  // seen between outcomes matter.
  // Step 5 of a chunk: the decision a message states (a problem and its solution, else a
  // commit subject that chooses: jobs/commit_decisions.hpp), or the decisions a revert
  // falsifies. A reverted change that was no decision is recorded, in its own words, as a
  // falsified one, so that the medallion can say not to repeat it. True when a decision was
  // created or changed.
  bool decide_from_message(const std::string& ns, const std::string& kind,
                           const std::string& content, const EventFields& fields,
                           const std::string& target, const std::string& event_id,
                           const std::string& agent_id, std::int64_t seq, std::int64_t ts) {
    const std::string decision_id = "decision:" + event_id;
    if (kind == "commit_change") {
      if (const auto revert = read_revert(content)) {
        int falsified = 0;
        if (!revert->subject.empty()) {
          falsified = decisions_.falsify_reverted(ns, revert->subject, seq, now_, kActor);
        }
        if (falsified == 0 && !revert->commit.empty()) {
          falsified = decisions_.falsify_commit(ns, revert->commit, seq, now_, kActor);
        }
        const std::string words =
            read_commit_subject(revert->subject.empty() ? revert->description : revert->subject,
                                false)
                .text;
        if (falsified == 0 && !words.empty()) {
          const store::DecisionRecord reverted{.decision_id = decision_id,
                                               .ns = ns,
                                               .target = target,
                                               .statement = words,
                                               .rationale = "Reverted: " + first_line(content, 280),
                                               .source = "revert",
                                               .problem_signature = "",
                                               .subject = "",
                                               .confidence = 0.5,
                                               .source_seq = seq,
                                               .ts_us = ts,
                                               .evidence = {{seq, ts}}};
          decisions_.record(reverted, now_, kActor);
          decisions_.falsify(decision_id, seq, now_, kActor);
          falsified = 1;
        }
        totals_.decisions_falsified += falsified;
        return falsified > 0;
      }
    }
    std::optional<ExtractedDecision> d;
    std::string source = "problem_solution";
    std::string signature;
    if (!fields.merge && (content.find("Solution:") != std::string::npos ||
                          content.find("Fix:") != std::string::npos)) {
      d = decision_from_message(kind, content, fields.files);
      if (d && is_routine_change(d->statement + " " + d->rationale)) d.reset();
      const std::string problem_line = labelled_line(content, "Problem:");
      signature =
          problem_signature(problem_line.empty() ? labelled_line(content, "Issue:") : problem_line);
    }
    if (!d && kind == "commit_change") {
      d = decision_from_commit(content, fields.merge, fields.files);
      source = "commit";
      signature.clear();
    }
    if (!d && (kind == "prompt" || kind == "conversation" || kind == "response")) {
      d = decision_from_turn(content, agent_id, ts);
      source = "conversation";
      signature.clear();
    }
    if (!d) return false;
    store::DecisionRecord record{.decision_id = decision_id,
                                 .ns = ns,
                                 .target = target,
                                 .statement = std::move(d->statement),
                                 .rationale = std::move(d->rationale),
                                 .source = source,
                                 .problem_signature = signature,
                                 .subject = kind == "commit_change" ? first_line(content, 300) : "",
                                 .confidence = d->confidence,
                                 .source_seq = seq,
                                 .ts_us = ts,
                                 .evidence = {{seq, ts}}};
    if (decisions_.record(record, now_, kActor)) ++totals_.decisions_extracted;
    return true;
  }

  void record_outcome(const std::string& ns, const Outcome& outcome) {
    SQLite::Statement& steps = trajectory_steps_;
    steps.reset();
    steps.bind(1, ns);
    steps.bind(2, outcome.trajectory_id);
    steps.bind(3, static_cast<std::int64_t>(outcome.final_seq));
    json procedure_steps = json::array();
    std::vector<std::string> tools;
    std::string task;
    std::string task_text;
    std::int64_t task_seq = 0;
    std::int64_t task_ts = 0;
    std::vector<TrajectoryCall> calls;
    std::vector<std::pair<std::int64_t, std::int64_t>> call_events;  // (seq, ts) of each call
    bool awaiting_outcome = false;
    while (steps.executeStep()) {
      const std::string kind = steps.getColumn(1).getString();
      const std::string content = steps.getColumn(2).getString();
      const json context = steps.getColumn(3).isNull()
                               ? json()
                               : json::parse(steps.getColumn(3).getString(), nullptr, false);
      if (kind == "task" && task.empty()) {
        task = first_line(content, 200);
        task_text = content;
        task_seq = steps.getColumn(0).getInt64();
        task_ts = steps.getColumn(4).getInt64();
      }
      if ((kind == "result" || kind == "error") && awaiting_outcome && !calls.empty()) {
        calls.back().succeeded = kind == "result" && truthy(context, "success");
      }
      if (kind == "call") {
        calls.push_back(
            {string_field(context, "tool"), content, string_field(context, "thought"), false});
        call_events.emplace_back(steps.getColumn(0).getInt64(), steps.getColumn(4).getInt64());
        const std::string tool = string_field(context, "tool");
        if (!tool.empty() && (tools.empty() || tools.back() != tool)) tools.push_back(tool);
        procedure_steps.push_back({{"action", first_line(content, 200)},
                                   {"rationale", first_line(string_field(context, "thought"), 300)},
                                   {"expected_outcome", nullptr}});
        awaiting_outcome = true;
      } else if ((kind == "result" || kind == "error") && awaiting_outcome) {
        procedure_steps.back()["expected_outcome"] = first_line(content, 200);
        awaiting_outcome = false;
      }
    }
    std::string sequence;
    for (const auto& tool : tools) sequence += (sequence.empty() ? "" : ">") + tool;
    json procedural;
    if (outcome.success) {
      procedural = {{"steps", procedure_steps},
                    {"target_task", task.empty() ? outcome.target : task},
                    {"success_evidence_ids", json::array({outcome.final_seq})}};
      ++totals_.procedures_distilled;
    }
    steps.reset();
    // A trajectory whose outcome is recorded again (a later final result) leaves the
    // successful runs of the sequence it had.
    SQLite::Statement& previous = outcome_previous_;
    previous.reset();
    previous.bind(1, ns);
    previous.bind(2, outcome.trajectory_id);
    if (previous.executeStep() && previous.getColumn(0).getInt() == 1) {
      if (const auto it = competences_.find(ns + '\n' + previous.getColumn(1).getString());
          it != competences_.end()) {
        const std::int64_t old_seq = previous.getColumn(2).getInt64();
        std::erase_if(it->second, [&](const SuccessfulRun& r) { return r.final_seq == old_seq; });
      }
    }
    previous.reset();
    SQLite::Statement& upsert = outcome_upsert_;
    upsert.reset();
    upsert.bind(1, ns);
    upsert.bind(2, outcome.trajectory_id);
    if (outcome.target.empty()) {
      upsert.bind(3);
    } else {
      upsert.bind(3, outcome.target);
    }
    upsert.bind(4, outcome.success ? 1 : 0);
    upsert.bind(5, sequence);
    if (procedural.is_null()) {
      upsert.bind(6);
    } else {
      upsert.bind(6, procedural.dump());
    }
    upsert.bind(7, static_cast<std::int64_t>(outcome.final_seq));
    upsert.bind(8, outcome.final_ts_us);
    upsert.exec();
    upsert.reset();
    if (outcome.success)
      record_trajectory_decision(ns, outcome, task_text, task_seq, task_ts, calls, call_events);
    if (outcome.success && !sequence.empty()) {
      // A sequence not known to the run yet is read whole (with this row) by update_competence.
      if (const auto it = competences_.find(ns + '\n' + sequence); it != competences_.end()) {
        const SuccessfulRun run{outcome.final_ts_us, outcome.final_seq,
                                outcome.target.empty() ? -1 : intern(outcome.target)};
        it->second.insert(std::upper_bound(it->second.begin(), it->second.end(), run), run);
      }
      update_competence(ns, sequence);
    }
  }

  // The decision a successful trajectory made (jobs/decision_extraction.hpp), superseding the
  // namespace's earlier answer to the same task.
  void record_trajectory_decision(const std::string& ns, const Outcome& outcome,
                                  const std::string& task, std::int64_t task_seq,
                                  std::int64_t task_ts, std::span<const TrajectoryCall> calls,
                                  std::span<const std::pair<std::int64_t, std::int64_t>> events) {
    auto d = decision_from_trajectory(task, calls);
    if (!d) return;
    // The task's own words, not problem_signature(): it folds quoted names, and tasks differ
    // by them ('problem named "Katy"').
    std::string signature = "task: " + d->rationale;
    store::DecisionRecord record{.decision_id = "decision:" + ns + ":" + outcome.trajectory_id,
                                 .ns = ns,
                                 .target = outcome.target,
                                 .statement = std::move(d->statement),
                                 .rationale = std::move(d->rationale),
                                 .source = "trajectory",
                                 .problem_signature = std::move(signature),
                                 .subject = "",
                                 .confidence = d->confidence,
                                 .source_seq = outcome.final_seq,
                                 .ts_us = outcome.final_ts_us,
                                 .evidence = {}};
    if (task_seq > 0) record.evidence.emplace_back(task_seq, task_ts);
    record.evidence.push_back(events[d->call_index]);
    record.evidence.emplace_back(outcome.final_seq, outcome.final_ts_us);
    if (decisions_.record(record, now_, kActor)) ++totals_.decisions_extracted;
    mark_decision_targets(ns);
  }

  // Questions asked and not answered: a prompt, task or conversation turn whose
  // text ends in "?" is pending in its trajectory until a later event of the trajectory comes
  // from another agent or is a result or a decision. The newest pending question of
  // each trajectory is kept in unanswered_questions (written once per chunk).
  struct PendingQuestion {
    std::int64_t seq = 0;  // 0: none
    std::string agent;
    bool dirty = false;
  };
  void track_question(const std::string& ns, const std::string& trajectory, std::int64_t seq,
                      const std::string& kind, const std::string& content,
                      const std::string& agent) {
    auto [it, fresh] = chunk_questions_.try_emplace(trajectory);
    PendingQuestion& pending = it->second;
    if (fresh) {
      question_load_.reset();
      question_load_.bind(1, ns);
      question_load_.bind(2, trajectory);
      if (question_load_.executeStep()) {
        pending.seq = question_load_.getColumn(0).getInt64();
        pending.agent = question_load_.getColumn(1).getString();
      }
      question_load_.reset();
    }
    if (pending.seq != 0 && (agent != pending.agent || kind == "result" || kind == "decision")) {
      pending = {0, "", true};
    }
    const auto end = content.find_last_not_of(" \t\r\n");
    const bool asks = (kind == "prompt" || kind == "task" || kind == "conversation") &&
                      end != std::string::npos && content[end] == '?';
    if (asks) pending = {seq, agent, true};
  }
  void store_questions(const std::string& ns) {
    for (const auto& [trajectory, pending] : chunk_questions_) {
      if (!pending.dirty) continue;
      SQLite::Statement& q = pending.seq != 0 ? question_save_ : question_clear_;
      q.reset();
      q.bind(1, ns);
      q.bind(2, trajectory);
      if (pending.seq != 0) {
        q.bind(3, static_cast<std::int64_t>(pending.seq));
        q.bind(4, pending.agent);
      }
      q.exec();
      q.reset();
    }
  }

  // The module entities whose decisions changed show them in their next summary.
  void mark_decision_targets(const std::string& ns) {
    for (const std::string& target : decisions_.take_changed_targets()) {
      summary_marks_.mark(ns, "module:" + target);
    }
  }

  // A successful run of a tool sequence, in the competence's (event time, seq) order.
  struct SuccessfulRun {
    std::int64_t ts_us;
    std::int64_t final_seq;
    std::int32_t target;  // interned; -1: none
    bool operator<(const SuccessfulRun& o) const {
      return ts_us != o.ts_us ? ts_us < o.ts_us : final_seq < o.final_seq;
    }
  };

  // The competence of a tool sequence from its successful runs: read from the table at its
  // first touch in a run, then kept as outcomes are recorded (record_outcome), so an outcome
  // does not re-read every success of the sequence (quadratic in its successes otherwise).
  void update_competence(const std::string& ns, const std::string& sequence) {
    auto [cached, fresh] = competences_.try_emplace(ns + '\n' + sequence);
    std::vector<SuccessfulRun>& state = cached->second;
    if (fresh) {
      SQLite::Statement& runs = competence_runs_;
      runs.reset();
      runs.bind(1, ns);
      runs.bind(2, sequence);
      while (runs.executeStep()) {
        state.push_back({runs.getColumn(2).getInt64(), runs.getColumn(0).getInt64(),
                         runs.getColumn(1).isNull() ? -1 : intern(runs.getColumn(1).getString())});
      }
      runs.reset();
    }
    const auto count = static_cast<std::int64_t>(state.size());
    if (count < p_.competence_min_successes) return;
    std::vector<std::int64_t> ids;
    ids.reserve(state.size());
    std::int32_t target = -1;  // the last one named, in (time, seq) order
    for (const SuccessfulRun& run : state) {
      ids.push_back(run.final_seq);
      if (run.target >= 0) target = run.target;
    }
    const std::string id = "competence:" + ns + ":" + sha256_hex(sequence).substr(0, 16);
    const std::string text = "The tool sequence " + sequence + " succeeded in " +
                             std::to_string(count) + " trajectories.";
    upsert_observation(id, ns, "competence", sequence,
                       target < 0 ? std::string() : strings_[static_cast<std::size_t>(target)],
                       "Competence: " + sequence, text, ids, count, count, count,
                       state[static_cast<std::size_t>(p_.competence_min_successes - 1)].ts_us,
                       state.back().ts_us);
    ++totals_.competences;
  }

  // A target's evidence totals (consolidation_targets), read once per chunk and written at
  // its end.
  struct TargetTotals {
    double weight = 0;
    std::int64_t events = 0;
    std::int64_t commits = 0;
    std::int64_t errors = 0;
    std::int64_t successes = 0;
    bool dirty = false;
  };

  // A proposal stream as the chunk sees it: its knowledge row and its running state
  // (consolidation_streams), read at its first event of the chunk and written at its end.
  // The tables are the truth between chunks, so a failed or cancelled chunk loses nothing.
  struct Stream {
    std::string id;         // "proposal:<namespace>:<target>", or an agent's decision_id
    bool external = false;  // an agent's record: evaluated, never accepted by the job
    // An agent's record's evidence window [from_seq, end_seq): its own event up to the event
    // that ended it (knowledge.ended_seq). A job's stream takes every event of its target.
    std::int64_t from_seq = 0;
    std::int64_t end_seq = std::numeric_limits<std::int64_t>::max();
    bool exists = false;  // the knowledge row exists
    bool active = false;  // it has running state: its evidence is complete up to the event
    EvidenceSums sums;
    std::int64_t last_seq = 0;  // seq of the latest evidence in (ts_us, event_seq) order
    std::vector<std::pair<std::int64_t, std::int64_t>>
        solutions;  // newest <= kSolutions (ts, seq); job streams only
    std::int64_t unique_contexts = 0;
    Phase phase = Phase::kPattern;
    std::string status = "draft";
    Scope scope = Scope::kLocal;
    StreamUse use;
    // As of the last evaluation (the audit entries' "previous").
    std::string vitality = "active";
    double confidence = 1.0;
    bool dirty = false;                    // to be written at the chunk's end
    bool reinforced = false;               // got evidence in this chunk while active (counted once)
    std::set<std::string> chunk_contexts;  // trajectories already counted or seen in this chunk
  };
  static constexpr std::size_t kSolutions = 5;

  // One weighted event of a target.
  struct Evidence {
    std::int64_t seq;
    std::int64_t ts_us;
    double weight;
    const std::string* trajectory;
    const std::string* content;
  };

  TargetTotals& totals_of(const std::string& ns, const std::string& target) {
    auto [it, fresh] = chunk_totals_.try_emplace(target);
    if (fresh) {
      SQLite::Statement& q = stream_totals_;
      q.reset();
      q.bind(1, ns);
      q.bind(2, target);
      if (q.executeStep()) {
        it->second.weight = q.getColumn(0).getDouble();
        it->second.commits = q.getColumn(1).getInt64();
        it->second.errors = q.getColumn(2).getInt64();
        it->second.successes = q.getColumn(3).getInt64();
        it->second.events = q.getColumn(4).getInt64();
      }
      q.reset();
    }
    return it->second;
  }

  void store_totals(const std::string& ns, const std::string& target, const TargetTotals& t) {
    SQLite::Statement& q = store_totals_;
    q.reset();
    q.bind(1, ns);
    q.bind(2, target);
    q.bind(3, t.weight);
    q.bind(4, static_cast<std::int64_t>(t.events));
    q.bind(5, static_cast<std::int64_t>(t.commits));
    q.bind(6, static_cast<std::int64_t>(t.errors));
    q.bind(7, static_cast<std::int64_t>(t.successes));
    q.exec();
  }

  static std::string stream_id(const std::string& ns, const std::string& target) {
    return "proposal:" + ns + ":" + target;
  }

  Stream& stream_of(const std::string& ns, const std::string& target) {
    auto [it, fresh] = chunk_streams_.try_emplace(target);
    if (!fresh) return it->second;
    Stream& s = it->second;
    s.id = stream_id(ns, target);
    load_stream(s);
    return s;
  }

  // The knowledge row of `s.id` and its running state, when they exist.
  void load_stream(Stream& s) {
    SQLite::Statement& q = stream_load_;
    q.reset();
    q.bind(1, s.id);
    if (q.executeStep()) {
      s.exists = true;
      s.phase = parse_phase(q.getColumn(0).getString()).value_or(Phase::kPattern);
      s.status = q.getColumn(1).getString();
      s.scope = parse_scope(q.getColumn(2).getString()).value_or(Scope::kLocal);
      s.use = {q.getColumn(3).getInt64(), q.getColumn(4).getInt64()};
      s.vitality = q.getColumn(5).getString();
      s.confidence = q.getColumn(6).getDouble();
      if (!q.getColumn(7).isNull()) {
        s.active = true;
        s.sums.count = q.getColumn(7).getInt64();
        s.sums.first_us = q.getColumn(8).getInt64();
        s.sums.last_us = q.getColumn(9).getInt64();
        s.last_seq = q.getColumn(10).getInt64();
        s.sums.gap_squares =
            static_cast<GapSquares>(q.getColumn(11).getInt64()) *
                (static_cast<GapSquares>(1) << 64) +
            static_cast<GapSquares>(static_cast<std::uint64_t>(q.getColumn(12).getInt64()));
        for (const auto& pair : json::parse(q.getColumn(13).getString())) {
          s.solutions.emplace_back(pair.at(0).get<std::int64_t>(), pair.at(1).get<std::int64_t>());
        }
        s.unique_contexts = q.getColumn(14).getInt64();
      }
    }
    q.reset();
  }

  // SQLite's `content LIKE '%Solution:%'` (ASCII case-insensitive), the candidates for the
  // "Solution:" lines the stream lists.
  static bool mentions_solution(std::string_view content) {
    constexpr std::string_view kNeedle = "solution:";
    const auto it = std::search(
        content.begin(), content.end(), kNeedle.begin(), kNeedle.end(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == static_cast<unsigned char>(b);
        });
    return it != content.end();
  }

  static void add_solution(std::vector<std::pair<std::int64_t, std::int64_t>>& top, std::int64_t ts,
                           std::int64_t seq) {
    top.emplace_back(ts, seq);
    std::sort(top.begin(), top.end(), std::greater<>());
    if (top.size() > kSolutions) top.resize(kSolutions);
  }

  std::optional<std::int64_t> neighbour(SQLite::Statement& q, const std::string& id,
                                        std::int64_t ts, std::int64_t seq) {
    q.reset();
    q.bind(1, id);
    q.bind(2, static_cast<std::int64_t>(ts));
    q.bind(3, static_cast<std::int64_t>(seq));
    std::optional<std::int64_t> found;
    if (q.executeStep()) found = q.getColumn(0).getInt64();
    q.reset();
    return found;
  }

  // One weighted event `e` of `target`: makes it evidence of the target's stream (creating the
  // stream when the target's totals first qualify) and of the agents' records on the target
  // whose window holds it, and evaluates each. O(log n) per stream: at most three index
  // probes, none when the event is the stream's latest.
  void add_evidence(const std::string& ns, const std::string& target, const TargetTotals& totals,
                    const Evidence& e) {
    Stream& s = stream_of(ns, target);
    if (s.active || totals.weight >= p_.stream_weight_threshold || totals.commits >= 1) {
      bool added = true;
      if (!s.active) {
        if (!s.exists) create_stream(ns, target, s, totals.weight, e.ts_us);
        start_stream(ns, target, s, e.seq);
      } else {
        added = append_evidence(ns, target, s, e);  // false: its evidence already
      }
      if (added) {
        s.dirty = true;
        evaluate(s);
      }
    }
    for (Stream* agent : agent_streams_of(ns, target)) {
      if (e.seq < agent->from_seq || e.seq >= agent->end_seq) continue;
      if (!agent->active) {
        start_stream(ns, target, *agent, e.seq);
      } else if (!append_evidence(ns, target, *agent, e)) {
        continue;
      }
      if (!agent->reinforced) {
        agent->reinforced = true;
        ++totals_.agent_records_reinforced;
      }
      agent->dirty = true;
      evaluate(*agent);
    }
  }

  // The agents' records (knowledge of provenance 'external': decisions, constraints,
  // assumptions, interventions, proposals) on `target`, read at the target's first event in
  // the chunk. Rows cannot appear during a chunk: ingest waits for its transaction.
  std::vector<Stream*>& agent_streams_of(const std::string& ns, const std::string& target) {
    auto [it, fresh] = chunk_agent_targets_.try_emplace(target);
    if (!fresh) return it->second;
    SQLite::Statement& q = agent_records_;
    q.reset();
    q.bind(1, ns);
    q.bind(2, target);
    while (q.executeStep()) {
      auto [record, inserted] = chunk_agent_streams_.try_emplace(q.getColumn(0).getString());
      Stream& s = record->second;
      if (inserted) {
        s.id = record->first;
        s.external = true;
        s.from_seq = q.getColumn(1).getInt64();
        s.end_seq = q.getColumn(2).getInt64();
        load_stream(s);
      }
      it->second.push_back(&s);
    }
    q.reset();
    return it->second;
  }

  // Adds `e` to the running state of an active stream. False when it was evidence already.
  bool append_evidence(const std::string& ns, const std::string& target, Stream& s,
                       const Evidence& e) {
    const std::string& id = s.id;
    evidence_insert_.reset();
    evidence_insert_.bind(1, id);
    evidence_insert_.bind(2, static_cast<std::int64_t>(e.seq));
    evidence_insert_.bind(3, static_cast<std::int64_t>(e.ts_us));
    evidence_insert_.bind(4, e.weight);
    if (evidence_insert_.exec() == 0) return false;
    const bool latest =
        e.ts_us > s.sums.last_us || (e.ts_us == s.sums.last_us && e.seq > s.last_seq);
    if (latest) {
      s.sums.add(e.ts_us, s.sums.last_us, std::nullopt);
      s.last_seq = e.seq;
    } else {
      // Out of time order: its neighbours in (ts_us, event_seq) order split one gap in two.
      s.sums.add(e.ts_us, neighbour(evidence_before_, id, e.ts_us, e.seq),
                 neighbour(evidence_after_, id, e.ts_us, e.seq));
    }
    // The "Solution:" lines are the job's streams' consequences; an agent's are its own.
    if (!s.external && mentions_solution(*e.content)) add_solution(s.solutions, e.ts_us, e.seq);
    // A new context when none of the target's earlier weighted events in the stream's window
    // had this trajectory (one index probe per trajectory and chunk: its later events in the
    // chunk are not new).
    if (s.chunk_contexts.insert(*e.trajectory).second) {
      stream_context_seen_.reset();
      stream_context_seen_.bind(1, ns);
      stream_context_seen_.bind(2, target);
      stream_context_seen_.bind(3, *e.trajectory);
      stream_context_seen_.bind(4, static_cast<std::int64_t>(e.seq - 1));
      stream_context_seen_.bind(5, static_cast<std::int64_t>(s.from_seq));
      if (!stream_context_seen_.executeStep()) ++s.unique_contexts;
      stream_context_seen_.reset();
    }
    if (!s.external && !s.reinforced) {
      s.reinforced = true;
      ++totals_.streams_reinforced;
    }
    return true;
  }

  // The knowledge row of a job's stream, when its target's totals first qualify at an event
  // of time `ts_us`: its salience counts from that event's time, not from the run's (which
  // would differ between replicas whose runs came at other moments).
  void create_stream(const std::string& ns, const std::string& target, Stream& s, double weight,
                     std::int64_t ts_us) {
    SQLite::Statement& create = stream_create_;
    create.reset();
    create.bind(1, s.id);
    create.bind(2, ns);
    create.bind(3, target);
    create.bind(4, "Changes in " + target);
    create.bind(5, json::array({target}).dump());
    create.bind(6, static_cast<std::int64_t>(now_));
    create.bind(7, static_cast<std::int64_t>(ts_us));
    create.exec();
    audit_.append("knowledge", s.id, "create", kActor, now_,
                  "evidence weight " + std::to_string(weight) + " for target " + target);
    ++totals_.streams_created;
    s.exists = true;
  }

  // Makes `s` active at event `seq`: makes every weighted event of the target in its window up
  // to `seq` its evidence and computes the running state from all its evidence (an agent's
  // record has its own event too). Once per stream (or once after an upgrade from a version
  // without running state), so its O(E) read is not per chunk or run.
  void start_stream(const std::string& ns, const std::string& target, Stream& s, std::int64_t seq) {
    const std::string& id = s.id;
    SQLite::Statement& backfill = stream_backfill_;
    backfill.reset();
    backfill.bind(1, id);
    backfill.bind(2, ns);
    backfill.bind(3, target);
    backfill.bind(4, static_cast<std::int64_t>(s.from_seq));
    backfill.bind(5, static_cast<std::int64_t>(seq));
    backfill.bind(6, static_cast<std::int64_t>(s.end_seq));
    backfill.exec();
    std::vector<std::int64_t> dates;
    stream_evidence_all_.reset();
    stream_evidence_all_.bind(1, id);
    while (stream_evidence_all_.executeStep()) {
      dates.push_back(stream_evidence_all_.getColumn(0).getInt64());
      s.last_seq = stream_evidence_all_.getColumn(1).getInt64();
    }
    stream_evidence_all_.reset();
    s.sums = EvidenceSums::of(dates);
    s.solutions.clear();
    stream_solutions_latest_.reset();
    stream_solutions_latest_.bind(1, id);
    while (!s.external && stream_solutions_latest_.executeStep()) {
      s.solutions.emplace_back(stream_solutions_latest_.getColumn(0).getInt64(),
                               stream_solutions_latest_.getColumn(1).getInt64());
    }
    stream_solutions_latest_.reset();
    stream_contexts_.reset();
    stream_contexts_.bind(1, ns);
    stream_contexts_.bind(2, target);
    stream_contexts_.bind(3, static_cast<std::int64_t>(seq));
    stream_contexts_.bind(4, static_cast<std::int64_t>(s.from_seq));
    stream_contexts_.executeStep();
    s.unique_contexts = stream_contexts_.getColumn(0).getInt64();
    stream_contexts_.reset();
    s.active = true;
  }

  // Promotion and acceptance after one evidence event, at the run's `now`: the tables are as
  // if the job had evaluated after every event, whatever the chunks and runs. Phases are never
  // demoted and an acceptance is never revoked, so a stream is promoted/accepted when the
  // rule holds at any prefix of its evidence (in seq order). An agent's record is promoted by
  // the same rule but never accepted by the job: its status is the agent's (seed 000
  // AcceptProposalRequest is theirs to send). O(1).
  void evaluate(Stream& s) {
    const std::string& id = s.id;
    // Nothing left to decide: the state it would record is never read again.
    if (s.sums.count == 0 || (s.phase == Phase::kCanonical && s.status != "draft")) return;
    const Vitality vitality =
        vitality_at(std::max(s.sums.last_us, s.use.last_hit_us), now_, p_.vitality);
    const StreamMetrics m = compute_metrics(s.sums, s.use, s.phase, s.scope, now_, p_.metrics);
    const Phase next = next_phase(s.phase, m, vitality, s.scope);
    const double acceptance = acceptance_score(m);
    const bool accept = !s.external && s.status == "draft" && next != Phase::kPattern &&
                        acceptance >= p_.accept_threshold;
    if (next != s.phase || accept) {
      const std::string previous = nlohmann::ordered_json{
          {"status", s.status},
          {"phase", to_string(s.phase)},
          {"vitality", s.vitality},
          {"confidence", s.confidence}}.dump();
      if (next != s.phase) {
        audit_.append("knowledge", id, "promote", kActor, now_,
                      std::string(to_string(s.phase)) + " -> " + to_string(next) +
                          " at frequency " + std::to_string(m.frequency) +
                          (s.external ? ", evidence confidence " : ", confidence ") +
                          std::to_string(m.confidence),
                      previous);
        ++(s.external ? totals_.agent_records_promoted : totals_.streams_promoted);
      }
      if (accept) {
        audit_.append("knowledge", id, "accept", kActor, now_,
                      "acceptance score " + std::to_string(acceptance) +
                          " >= " + std::to_string(p_.accept_threshold),
                      previous);
        ++totals_.proposals_accepted;
        s.status = "accepted";
      }
      s.phase = next;
    }
    s.vitality = to_string(vitality);
    if (!s.external) s.confidence = m.confidence;  // an agent's record keeps the agent's
  }

  // Writes a stream's row and running state at the end of a chunk: the metrics of its whole
  // evidence from the running sums, the phase and status evaluate() decided, and what the
  // row lists (newest evidence ids, latest line, "Solution:" lines, procedure), each from an
  // index query that reads only what it returns.
  void write_stream(const std::string& ns, const std::string& target, const Stream& s) {
    const std::string id = stream_id(ns, target);
    const TargetTotals& totals = totals_of(ns, target);
    const Vitality vitality =
        vitality_at(std::max(s.sums.last_us, s.use.last_hit_us), now_, p_.vitality);
    const StreamMetrics m = compute_metrics(s.sums, s.use, s.phase, s.scope, now_, p_.metrics);
    const double acceptance = acceptance_score(m);

    // The newest kMaxEvidenceIdsListed seqs, ascending.
    std::vector<std::int64_t> newest;
    evidence_newest_.reset();
    evidence_newest_.bind(1, id);
    evidence_newest_.bind(2, static_cast<std::int64_t>(kMaxEvidenceIdsListed));
    while (evidence_newest_.executeStep())
      newest.push_back(evidence_newest_.getColumn(0).getInt64());
    evidence_newest_.reset();
    json recent_ids = json::array();
    std::for_each(newest.rbegin(), newest.rend(),
                  [&recent_ids](std::int64_t seq) { recent_ids.push_back(seq); });

    const std::string latest_line = first_line(event_content(s.last_seq), 120);
    const std::string rationale =
        std::to_string(m.frequency) + " events over " +
        std::to_string(static_cast<std::int64_t>(m.lifetime_days)) + " days point at " + target +
        " (" + std::to_string(totals.commits) + " commits, " + std::to_string(totals.errors) +
        " errors, " + std::to_string(totals.successes) +
        " successful results). Latest: " + latest_line;

    json consequences = json::array();
    json solutions = json::array();
    for (const auto& [ts, seq] : s.solutions) {
      const std::string line = labelled_line(event_content(seq), "Solution:");
      if (!line.empty()) consequences.push_back(line);
      solutions.push_back({ts, seq});
    }
    SQLite::Statement& procedure = stream_procedure_;
    procedure.reset();
    procedure.bind(1, ns);
    procedure.bind(2, target);
    const std::string procedural =
        procedure.executeStep() ? procedure.getColumn(0).getString() : "";
    procedure.reset();

    SQLite::Statement& update = stream_update_;
    update.reset();
    update.bind(1, id);
    update.bind(2, rationale);
    update.bind(3, s.status);
    update.bind(4, to_string(s.phase));
    update.bind(5, to_string(vitality));
    update.bind(6, recent_ids.dump());
    update.bind(7, consequences.dump());
    if (procedural.empty()) {
      update.bind(8);
    } else {
      update.bind(8, procedural);
    }
    update.bind(9, static_cast<std::int64_t>(m.frequency));
    update.bind(10, static_cast<std::int64_t>(s.unique_contexts));
    update.bind(11, m.confidence);
    update.bind(12, m.stability);
    update.bind(13, m.reinforcement_density);
    update.bind(14, m.coverage);
    update.bind(15, m.lifetime_days);
    update.bind(16, m.removal_cost);
    update.bind(17, m.utility);
    update.bind(18, acceptance);
    update.bind(19, static_cast<std::int64_t>(s.sums.first_us));
    update.bind(20, static_cast<std::int64_t>(s.sums.last_us));
    update.bind(21, static_cast<std::int64_t>(now_));
    update.exec();
    store_running_state(s, solutions);
  }

  // An agent's record at the end of a chunk: the lifecycle columns only. Its title,
  // rationale, consequences, evidence_event_ids, status and confidence are the agent's (the
  // decay job decays confidence from confidence_base since last_seen_us).
  void write_agent_stream(const Stream& s) {
    const Vitality vitality =
        vitality_at(std::max(s.sums.last_us, s.use.last_hit_us), now_, p_.vitality);
    const StreamMetrics m = compute_metrics(s.sums, s.use, s.phase, s.scope, now_, p_.metrics);
    SQLite::Statement& update = agent_stream_update_;
    update.reset();
    update.bind(1, s.id);
    update.bind(2, to_string(s.phase));
    update.bind(3, to_string(vitality));
    update.bind(4, static_cast<std::int64_t>(m.frequency));
    update.bind(5, static_cast<std::int64_t>(s.unique_contexts));
    update.bind(6, m.stability);
    update.bind(7, m.reinforcement_density);
    update.bind(8, m.coverage);
    update.bind(9, m.lifetime_days);
    update.bind(10, m.removal_cost);
    update.bind(11, m.utility);
    update.bind(12, acceptance_score(m));
    update.bind(13, static_cast<std::int64_t>(s.sums.first_us));
    update.bind(14, static_cast<std::int64_t>(s.sums.last_us));
    update.bind(15, static_cast<std::int64_t>(now_));
    update.exec();
    store_running_state(s, json::array());
  }

  // consolidation_streams: what the next chunk or run continues from.
  void store_running_state(const Stream& s, const json& solutions) {
    SQLite::Statement& state = stream_store_;
    state.reset();
    state.bind(1, s.id);
    state.bind(2, static_cast<std::int64_t>(s.sums.count));
    state.bind(3, static_cast<std::int64_t>(s.sums.first_us));
    state.bind(4, static_cast<std::int64_t>(s.sums.last_us));
    state.bind(5, static_cast<std::int64_t>(s.last_seq));
    // Two limbs: hi = floor(v / 2^64), lo = v mod 2^64 stored as its int64 bit pattern.
    state.bind(6, static_cast<std::int64_t>(s.sums.gap_squares >> 64));
    state.bind(7, static_cast<std::int64_t>(static_cast<std::uint64_t>(s.sums.gap_squares)));
    state.bind(8, solutions.dump());
    state.bind(9, static_cast<std::int64_t>(s.unique_contexts));
    state.exec();
  }

  // One problem occurrence, strings interned (see intern()).
  struct Occurrence {
    std::int64_t ts_us;
    std::int64_t seq;
    std::int32_t trajectory;
    bool operator<(const Occurrence& o) const {
      return ts_us != o.ts_us ? ts_us < o.ts_us : seq < o.seq;
    }
  };

  // What this run knows of a signature's occurrences: the totals update_pattern() reports,
  // never the whole history. The first touch in a run reads the totals kept in
  // problem_patterns (migration 15); every touch adds the occurrences above max_seq (its
  // chunk's) and writes the totals back.
  struct PatternState {
    std::string id;  // the observation's
    std::int64_t count = 0;
    std::int64_t max_seq = 0;                                // every occurrence up to it is counted
    std::int64_t last_ts = 0;                                // the largest ts_us
    std::unordered_map<std::int32_t, std::int64_t> targets;  // interned target -> occurrences
    std::vector<std::int32_t> changed_targets;               // since the totals were last written
    std::vector<std::int64_t> newest;  // ascending; its last kMaxSupportIdsListed are listed
    // As stored (problem_patterns.newest_floor_seq): the oldest of the newest
    // min(count, kMaxSupportIdsListed) occurrences; 0 when not known.
    std::int64_t newest_floor = 0;
    std::int64_t trajectory_count = 0;  // distinct trajectories
    // Every trajectory of the signature, when the run has seen its whole history (it had
    // none before the run, as in a full cycle): then no probe asks SQLite whether one is new.
    bool trajectories_known = false;
    std::unordered_set<std::int32_t> trajectories;
    // The qualifying time (0: not known to qualify). Adding occurrences can only move it
    // earlier: each prefix of the (ts_us, seq) order keeps the occurrences it had and may
    // gain some, so the prefix that qualified still does. Hence it changes only when an
    // occurrence arrives before it, and the walk needs only the occurrences with ts_us <= it.
    std::int64_t qualified_at = 0;
    bool head_loaded = false;
    std::int64_t head_bound = 0;   // head holds every occurrence with ts_us <= head_bound
    std::vector<Occurrence> head;  // sorted by (ts_us, seq)
  };

  std::int32_t intern(const std::string& text) {
    const auto [it, inserted] =
        interned_.try_emplace(text, static_cast<std::int32_t>(strings_.size()));
    if (inserted) strings_.push_back(text);
    return it->second;
  }

  static void bind_signature(SQLite::Statement& q, const std::string& ns,
                             const std::string& signature) {
    q.reset();
    q.bind(1, ns);
    q.bind(2, signature);
  }

  // The first touch of a signature in a run: the totals of its history before this chunk
  // (kept by the chunks before, so that a run's cost does not grow with the log), the
  // newest ids, and the qualifying time of that history, which is the observation's
  // first_detected_us (the minimum of the values written, and each write had the then
  // qualifying time: see upsert_observation()).
  void load_pattern(const std::string& ns, const std::string& signature,
                    const std::string& observation_id, PatternState& s) {
    SQLite::Statement& totals = pattern_totals_;
    bind_signature(totals, ns, signature);
    if (totals.executeStep()) {
      s.count = totals.getColumn(0).getInt64();
      s.max_seq = totals.getColumn(1).getInt64();
      s.last_ts = totals.getColumn(2).getInt64();
      s.trajectory_count = totals.getColumn(3).getInt64();
      if (!totals.getColumn(4).isNull()) s.newest_floor = totals.getColumn(4).getInt64();
    }
    totals.reset();
    if (s.count == 0) {  // a new signature: the run sees every occurrence, and keeps them
      s.trajectories_known = true;
      s.head_loaded = true;
      s.head_bound = std::numeric_limits<std::int64_t>::max();
      return;
    }
    SQLite::Statement& targets = pattern_targets_;
    bind_signature(targets, ns, signature);
    while (targets.executeStep()) {
      s.targets[intern(targets.getColumn(0).getString())] = targets.getColumn(1).getInt64();
    }
    targets.reset();
    SQLite::Statement& observed = observation_first_;
    observed.reset();
    observed.bind(1, observation_id);
    bool listed = false;
    if (observed.executeStep()) {
      s.qualified_at = observed.getColumn(0).getInt64();
      if (observed.getColumn(1).getInt64() == s.count &&
          observed.getColumn(3).getString() == signature) {
        listed = newest_from_observation(observed.getColumn(2).getString(), s);
      }
    }
    observed.reset();
    if (!listed) {
      SQLite::Statement& newest = pattern_newest_;
      bind_signature(newest, ns, signature);
      newest.bind(3, static_cast<std::int64_t>(s.max_seq));
      newest.bind(4, static_cast<std::int64_t>(kMaxSupportIdsListed));
      while (newest.executeStep()) s.newest.push_back(newest.getColumn(0).getInt64());
      newest.reset();
      std::reverse(s.newest.begin(), s.newest.end());
    }
  }

  // The observation written when the support was s.count lists the newest ids of exactly
  // the occurrences counted now (occurrences are never deleted, and every write lists the
  // newest kMaxSupportIdsListed by seq), so a run reads that one row instead of 200 rows of
  // problem_occurrences per signature (0.4 G instructions of a +10,000 run at 1M events).
  // A list an earlier version wrote in another order (the first one listed by event time)
  // fails the checks and the rows are read: every listed id is an occurrence of the
  // signature (only this job writes the list), so a list in ascending order of the right
  // length ending at max_seq is the newest occurrences exactly when as many occurrences lie
  // in its range, that is when it starts at the stored floor (the oldest of that many newest,
  // migration 22). Counting them instead read ~200 index entries a signature: 3% of a +10,000
  // run at 1M events.
  bool newest_from_observation(const std::string& text, PatternState& s) {
    const auto expected = static_cast<std::size_t>(
        std::min<std::int64_t>(s.count, static_cast<std::int64_t>(kMaxSupportIdsListed)));
    // simdjson: nlohmann's parse of the 200 ids cost more than the rows it spares.
    const auto doc = id_lists_.parse(text);
    simdjson::dom::array ids;
    if (expected == 0 || !doc || doc->get_array().get(ids) != simdjson::SUCCESS ||
        ids.size() != expected) {
      return false;
    }
    std::vector<std::int64_t> newest;
    newest.reserve(expected);
    for (const simdjson::dom::element id : ids) {
      std::int64_t seq = 0;
      if (id.get_int64().get(seq) != simdjson::SUCCESS) return false;
      if (!newest.empty() && seq <= newest.back()) return false;
      newest.push_back(seq);
    }
    if (newest.back() != s.max_seq || newest.front() != s.newest_floor) return false;
    s.newest = std::move(newest);
    return true;
  }

  // Adds the occurrences above max_seq (this chunk's). A trajectory is new to the signature
  // when no earlier occurrence (in seq) has it. Such an occurrence can only lie between the
  // trajectory's first event (every event has its event_targets row, with its trajectory) and
  // this one, so the probe reads the signature's rows in that range of its primary key
  // (a trajectory spans a few events) instead of every trajectory of the history; an index on
  // the trajectories would make each occurrence dirty one more random page (+0.45 s of
  // system time per +10,000 at 1M events).
  void extend_pattern(const std::string& ns, const std::string& signature, PatternState& s) {
    SQLite::Statement& rows = pattern_rows_;
    bind_signature(rows, ns, signature);
    rows.bind(3, static_cast<std::int64_t>(s.max_seq));
    SQLite::Statement& seen = pattern_trajectory_seen_;
    const auto middle = static_cast<std::ptrdiff_t>(s.head.size());
    while (rows.executeStep()) {
      const SQLite::Column trajectory = rows.getColumn(1);
      const Occurrence o{rows.getColumn(2).getInt64(), rows.getColumn(0).getInt64(),
                         intern(trajectory.getString())};
      ++s.count;
      s.max_seq = std::max(s.max_seq, o.seq);
      s.last_ts = std::max(s.last_ts, o.ts_us);
      s.newest.push_back(o.seq);
      if (s.trajectories_known) {
        if (s.trajectories.insert(o.trajectory).second) ++s.trajectory_count;
      } else {
        bind_signature(seen, ns, signature);
        seen.bind(3, strings_[static_cast<std::size_t>(o.trajectory)]);
        seen.bind(4, static_cast<std::int64_t>(o.seq));
        if (!seen.executeStep()) ++s.trajectory_count;
        seen.reset();
      }
      if (!rows.getColumn(3).isNull()) {
        const std::int32_t target = intern(rows.getColumn(3).getString());
        ++s.targets[target];
        s.changed_targets.push_back(target);
      }
      if (s.head_loaded && o.ts_us <= s.head_bound) s.head.push_back(o);
    }
    rows.reset();
    // Rows come in seq (primary key) order, every new seq above the known ones.
    if (s.newest.size() > 2 * kMaxSupportIdsListed) {
      s.newest.erase(s.newest.begin(),
                     s.newest.end() - static_cast<std::ptrdiff_t>(kMaxSupportIdsListed));
    }
    std::sort(s.head.begin() + middle, s.head.end());
    std::inplace_merge(s.head.begin(), s.head.begin() + middle, s.head.end());
  }

  // Writes the totals back (problem_patterns, problem_pattern_targets), in the chunk's
  // transaction, so that they always count exactly the stored occurrences.
  void save_pattern(const std::string& ns, const std::string& signature, PatternState& s) {
    SQLite::Statement& save = save_pattern_;
    bind_signature(save, ns, signature);
    save.bind(3, static_cast<std::int64_t>(s.count));
    save.bind(4, static_cast<std::int64_t>(s.max_seq));
    save.bind(5, static_cast<std::int64_t>(s.last_ts));
    save.bind(6, static_cast<std::int64_t>(s.trajectory_count));
    // s.newest ends with the newest min(count, kMaxSupportIdsListed) occurrences (load_pattern
    // read that many, extend_pattern appended every later one).
    const std::size_t listed = std::min(s.newest.size(), kMaxSupportIdsListed);
    if (listed == 0) {
      save.bind(7);
    } else {
      s.newest_floor = s.newest[s.newest.size() - listed];
      save.bind(7, static_cast<std::int64_t>(s.newest_floor));
    }
    save.exec();
    std::sort(s.changed_targets.begin(), s.changed_targets.end());
    s.changed_targets.erase(std::unique(s.changed_targets.begin(), s.changed_targets.end()),
                            s.changed_targets.end());
    SQLite::Statement& target = save_pattern_target_;
    for (const std::int32_t t : s.changed_targets) {
      bind_signature(target, ns, signature);
      target.bind(3, strings_[static_cast<std::size_t>(t)]);
      target.bind(4, static_cast<std::int64_t>(s.targets[t]));
      target.exec();
    }
    s.changed_targets.clear();
  }

  // The event time at which the occurrences, in (ts_us, seq) order, first met both thresholds
  // (0: never). Only occurrences up to the current qualifying time can matter (PatternState),
  // so the head keeps those alone, read once per run and cut back as the time moves earlier.
  std::int64_t qualifying_time(const std::string& ns, const std::string& signature,
                               PatternState& s) {
    if (const std::int64_t t = walk_head(ns, signature, s); t != 0) return t;
    if (s.head_bound == std::numeric_limits<std::int64_t>::max()) return 0;
    // The stored time was found under other thresholds (consolidation.pattern_min_* raised
    // since): the whole history decides, as it did before the head was kept.
    s.head.clear();
    s.head_loaded = false;
    s.qualified_at = 0;
    return walk_head(ns, signature, s);
  }

  std::int64_t walk_head(const std::string& ns, const std::string& signature, PatternState& s) {
    if (!s.head_loaded) {
      s.head_bound =
          s.qualified_at != 0 ? s.qualified_at : std::numeric_limits<std::int64_t>::max();
      SQLite::Statement& rows = pattern_head_;
      bind_signature(rows, ns, signature);
      rows.bind(3, static_cast<std::int64_t>(s.head_bound));
      while (rows.executeStep()) {
        s.head.push_back({rows.getColumn(1).getInt64(), rows.getColumn(0).getInt64(),
                          intern(rows.getColumn(2).getString())});
      }
      rows.reset();
      s.head_loaded = true;
    }
    std::int64_t seen = 0;
    std::vector<std::int32_t> walked;
    for (const Occurrence& o : s.head) {
      ++seen;
      if (static_cast<std::int64_t>(walked.size()) < p_.pattern_min_trajectories &&
          std::find(walked.begin(), walked.end(), o.trajectory) == walked.end()) {
        walked.push_back(o.trajectory);
      }
      if (seen >= p_.pattern_min_occurrences &&
          static_cast<std::int64_t>(walked.size()) >= p_.pattern_min_trajectories) {
        // Later occurrences cannot matter again: the time only moves earlier.
        s.head_bound = o.ts_us;
        s.head.erase(
            std::upper_bound(s.head.begin(), s.head.end(), o.ts_us,
                             [](std::int64_t t, const Occurrence& x) { return t < x.ts_us; }),
            s.head.end());
        return o.ts_us;
      }
    }
    return 0;
  }

  // A chunk costs what it adds: the history before it is read as kept totals (at 1M events a
  // +10,000 run touches nearly every signature, and reading each one's whole history was half
  // of the run), the chunk's rows one by one.
  void update_pattern(const std::string& ns, const std::string& signature,
                      std::int64_t earliest_ts) {
    auto [cached, fresh] = patterns_.try_emplace(ns + '\n' + signature);
    PatternState& s = cached->second;
    if (fresh) {
      s.id = "pattern:" + ns + ":" + sha256_hex(signature).substr(0, 16);
      load_pattern(ns, signature, s.id, s);
    }
    extend_pattern(ns, signature, s);
    save_pattern(ns, signature, s);
    if (s.count < p_.pattern_min_occurrences) return;
    if (s.trajectory_count < p_.pattern_min_trajectories) {
      return;  // the walk below could not qualify it either
    }
    // This chunk's occurrences all come after the known ones in seq, so one at the qualifying
    // time itself comes after the occurrence that qualified: only an earlier one moves it.
    if (s.qualified_at == 0 || earliest_ts < s.qualified_at) {
      s.qualified_at = qualifying_time(ns, signature, s);
    }
    if (s.qualified_at == 0) return;
    // The most frequent target; among equals the first in byte order.
    std::int32_t best_target = -1;
    std::int64_t best = 0;
    for (const auto& [t, n] : s.targets) {
      if (n > best || (n == best && strings_[static_cast<std::size_t>(t)] <
                                        strings_[static_cast<std::size_t>(best_target)])) {
        best_target = t;
        best = n;
      }
    }
    const std::string target =
        best_target < 0 ? std::string() : strings_[static_cast<std::size_t>(best_target)];
    const std::span<const std::int64_t> ids =
        std::span(s.newest).last(std::min(s.newest.size(), kMaxSupportIdsListed));
    // Readers see the problem in the words of its newest occurrence, never the signature's
    // placeholders ("<n> <n> <n> is out need new version").
    const std::string newest = event_content(s.max_seq);
    std::string problem = labelled_line(newest, "Problem:");
    if (problem.empty()) problem = newest;
    problem = first_line(problem, 200);
    if (problem.empty()) problem = signature.substr(0, 200);
    const std::string text = "Seen " + std::to_string(s.count) + " times in " +
                             std::to_string(s.trajectory_count) + " trajectories" +
                             (target.empty() ? "" : ", mostly around " + target) +
                             "; latest: " + problem;
    upsert_observation(s.id, ns, "pattern", signature, target, "Recurring problem: " + problem,
                       text, ids, s.count, s.trajectory_count, 0, s.qualified_at, s.last_ts);
  }

  // Creates or reinforces an observation (seed 003 MemoryMetaObservation). Confidence
  // min(0.95, 0.5 + 0.05 * support) and importance min(1, log10(1 + support) / 2) are ours.
  // `first_us` is when the support known so far first met the threshold (event time); a later
  // chunk can bring earlier events (timestamps are not in seq order), which can only move
  // that moment earlier, so the stored value is the minimum: the same however the events
  // were chunked (it used to keep the first chunk's value).
  void upsert_observation(const std::string& id, const std::string& ns, const std::string& type,
                          const std::string& signature, const std::string& target,
                          const std::string& title, const std::string& text,
                          std::span<const std::int64_t> ids, std::int64_t support,
                          std::int64_t trajectories, std::int64_t successes, std::int64_t first_us,
                          std::int64_t last_us) {
    SQLite::Statement& before = observation_support_;
    before.reset();
    before.bind(1, id);
    const bool exists = before.executeStep();
    const std::int64_t previous_support = exists ? before.getColumn(0).getInt64() : 0;
    before.reset();
    if (exists && previous_support == support) return;
    const std::int64_t threshold =
        type == "pattern" ? p_.pattern_min_occurrences : p_.competence_min_successes;
    SQLite::Statement& upsert = observation_upsert_;
    upsert.reset();
    upsert.bind(1, id);
    upsert.bind(2, ns);
    upsert.bind(3, type);
    upsert.bind(4, signature);
    if (target.empty()) {
      upsert.bind(5);
    } else {
      upsert.bind(5, target);
    }
    upsert.bind(6, title);
    upsert.bind(7, text);
    upsert.bind(8, integer_array_json(ids));
    upsert.bind(9, static_cast<std::int64_t>(support));
    upsert.bind(10, static_cast<std::int64_t>(trajectories));
    upsert.bind(11, static_cast<std::int64_t>(successes));
    upsert.bind(12, static_cast<std::int64_t>(support - threshold));
    upsert.bind(13, static_cast<std::int64_t>(first_us));
    upsert.bind(14, static_cast<std::int64_t>(last_us));
    upsert.exec();
    const std::int64_t now = ctx_.clock.now_us();
    if (exists) {
      audit_.append(
          "observation", id, "reinforce", kActor, now,
          "support " + std::to_string(previous_support) + " -> " + std::to_string(support));
      ++totals_.observations_reinforced;
    } else {
      audit_.append("observation", id, "create", kActor, now, title);
      ++totals_.observations_created;
    }
  }

  std::string event_content(std::int64_t seq) {
    event_content_.reset();
    event_content_.bind(1, static_cast<std::int64_t>(seq));
    std::string content =
        event_content_.executeStep() ? event_content_.getColumn(0).getString() : "";
    event_content_.reset();
    return content;
  }

  JobContext& ctx_;
  const ConsolidationParams& p_;
  SQLite::Database& db_;
  JobState state_;
  store::AuditLog audit_;
  store::ExtractedDecisionStore decisions_;
  SummaryMarks summary_marks_;
  SQLite::Statement question_load_;
  SQLite::Statement question_save_;
  SQLite::Statement question_clear_;
  SQLite::Statement read_events_;
  SQLite::Statement insert_target_;
  SQLite::Statement trajectory_target_;
  SQLite::Statement store_totals_;
  SQLite::Statement insert_problem_;
  SQLite::Statement stream_totals_;
  SQLite::Statement stream_load_;
  SQLite::Statement stream_store_;
  SQLite::Statement stream_create_;
  SQLite::Statement stream_backfill_;
  SQLite::Statement agent_records_;
  SQLite::Statement stream_evidence_all_;
  SQLite::Statement evidence_insert_;
  SQLite::Statement evidence_before_;
  SQLite::Statement evidence_after_;
  SQLite::Statement evidence_newest_;
  SQLite::Statement stream_solutions_latest_;
  SQLite::Statement stream_contexts_;
  SQLite::Statement stream_context_seen_;
  SQLite::Statement stream_procedure_;
  SQLite::Statement stream_update_;
  SQLite::Statement agent_stream_update_;
  SQLite::Statement event_content_;
  SQLite::Statement trajectory_steps_;
  SQLite::Statement outcome_previous_;
  SQLite::Statement outcome_upsert_;
  SQLite::Statement competence_runs_;
  SQLite::Statement pattern_rows_;
  SQLite::Statement pattern_totals_;
  SQLite::Statement pattern_targets_;
  SQLite::Statement pattern_newest_;
  SQLite::Statement pattern_trajectory_seen_;
  SQLite::Statement save_pattern_;
  SQLite::Statement save_pattern_target_;
  SQLite::Statement pattern_head_;
  SQLite::Statement observation_first_;
  SQLite::Statement observation_support_;
  SQLite::Statement observation_upsert_;
  std::map<std::string, TargetTotals> chunk_totals_;  // by target, this chunk only
  std::map<std::string, Stream> chunk_streams_;       // by target, this chunk only
  // Agents' records by decision_id, and those of each target touched, this chunk only.
  std::map<std::string, Stream> chunk_agent_streams_;
  std::map<std::string, std::vector<Stream*>> chunk_agent_targets_;
  std::map<std::string, PendingQuestion> chunk_questions_;  // by trajectory, this chunk only
  std::unordered_map<std::string, PatternState> patterns_;  // ns + '\n' + signature, this run
  // ns + '\n' + tool sequence -> its successful runs in (ts, seq) order, this run
  std::unordered_map<std::string, std::vector<SuccessfulRun>> competences_;
  std::unordered_map<std::string, std::int32_t> interned_;
  std::vector<std::string> strings_;
  EventFieldReader field_reader_;
  EventJsonReader id_lists_;
  Totals totals_;
  std::int64_t now_ = 0;  // the run's "now": every evaluation of the run uses it
};

}  // namespace

json run_consolidation(JobContext& ctx, const ConsolidationParams& params) {
  return Consolidator(ctx, params).run();
}

}  // namespace reflectd::jobs
