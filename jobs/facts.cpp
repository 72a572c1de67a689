#include "jobs/facts.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

#include "jobs/entity_summaries.hpp"
#include "jobs/job_state.hpp"
#include "store/fact_store.hpp"
#include "text/entity_extraction.hpp"
#include "text/fact_extraction.hpp"

namespace reflectd::jobs {
namespace {

// The seed's default confidence of a fact (MemoryFact.confidence, seed 003): every rule here
// reads what a speaker said of themselves or a statement as published, nothing inferred.
constexpr double kStatedFactConfidence = 0.8;

// The kinds extract_facts() reads; the rest are skipped in SQL.
constexpr const char* kFactKinds =
    "'prompt', 'conversation', 'response', 'observation', 'learning', 'discovery', 'pattern'";

constexpr const char* kTurnKinds = "'prompt', 'conversation', 'response'";

// The speaker of a turn: its leading "Name:", else its agent.
std::string speaker_of(std::string_view content, std::string_view agent) {
  std::string name = text::turn_speaker(content).first;
  return name.empty() ? std::string(agent) : name;
}

// Who "you" is in a turn: the speaker of the nearest earlier turn of its namespace (by
// timestamp, then seq) who is not the turn's own speaker. Read from the store, not from the
// job's chunk, so that the fact is the same however the runs fell. Empty when none.
std::string listener_of(SQLite::Statement& earlier, const std::string& ns, std::int64_t ts_us,
                        std::int64_t seq, const std::string& speaker) {
  earlier.reset();
  earlier.bind(1, ns);
  earlier.bind(2, ts_us);
  earlier.bind(3, seq);
  std::string listener;
  while (listener.empty() && earlier.executeStep()) {
    std::string name =
        speaker_of(earlier.getColumn(1).getString(), earlier.getColumn(0).getString());
    if (name != speaker) listener = std::move(name);
  }
  earlier.reset();
  return listener;
}

bool second_person_written(std::string_view content) {
  for (std::size_t at = content.find_first_of("yY"); at != std::string_view::npos;
       at = content.find_first_of("yY", at + 1)) {
    if (at + 3 <= content.size() && (content[at + 1] == 'o' || content[at + 1] == 'O') &&
        (content[at + 2] == 'u' || content[at + 2] == 'U')) {
      return true;
    }
  }
  return false;
}

struct PrimaryEntity {
  std::string key;
  std::string name;
};

// SHODH statements are about the event's primary entity: the first explicit one of its
// structured entities (`entities_json`, the events.entities column); empty without one.
PrimaryEntity primary_entity(const text::FactSource& source, const std::string& entities_json) {
  const auto entities = nlohmann::json::parse(entities_json, nullptr, false);
  text::EventView view;
  view.kind = source.kind;
  view.content = source.content;
  view.agent_id = source.agent_id;
  view.entities = entities.is_discarded() ? nullptr : &entities;
  for (const text::Mention& m : extract_entities(view).mentions) {
    if (m.source == text::Source::kExplicit) return {m.key, m.display};
  }
  return {};
}

// A fact of the event `source_seq` as stored, at the event's sensitivity.
store::FactRow fact_row(text::ExtractedFact&& f, std::string ns, std::int64_t source_seq,
                        std::string sensitivity) {
  store::FactRow row;
  row.ns = std::move(ns);
  row.entity_key = std::move(f.entity_key);
  row.entity_name = std::move(f.entity_name);
  row.entity_type = std::move(f.entity_type);
  row.attribute = std::move(f.attribute);
  row.text = std::move(f.statement);
  row.confidence = kStatedFactConfidence;
  row.valid_from_us = f.valid_from_us;
  row.valid_to_us = f.valid_to_us;
  row.whole_days = f.whole_days;
  row.source_seq = source_seq;
  row.sentence_index = f.sentence_index;
  row.sensitivity = std::move(sensitivity);
  row.linked = std::move(f.linked);
  return row;
}

}  // namespace

nlohmann::json run_facts(JobContext& ctx) {
  JobState state(ctx.db, "facts");
  store::FactStore facts(ctx.db);
  SummaryMarks marks(ctx.db);
  SQLite::Statement newest(ctx.db, "SELECT coalesce(max(seq), 0) FROM events");
  SQLite::Statement read(
      ctx.db, std::string("SELECT seq, namespace, kind, coalesce(agent_id, ''), ts_us, content, "
                          "sensitivity, entities FROM events WHERE seq > ?1 AND seq <= ?2 "
                          "AND status = 'active' AND kind IN (") +
                  kFactKinds + ") ORDER BY seq");
  SQLite::Statement earlier(
      ctx.db, std::string("SELECT coalesce(agent_id, ''), content FROM events "
                          "WHERE namespace = ?1 AND ts_us <= ?2 AND seq <> ?3 "
                          "AND (ts_us < ?2 OR seq < ?3) AND status = 'active' AND kind IN (") +
                  kTurnKinds + ") ORDER BY ts_us DESC, seq DESC LIMIT 8");
  SQLite::Statement superseded(ctx.db,
                               "SELECT count(*) FROM facts WHERE fact_id > ?1 "
                               "AND supersedes_fact_id IS NOT NULL");
  SQLite::Statement links(ctx.db, "SELECT count(*) FROM fact_entity_links WHERE fact_id > ?1");
  SQLite::Statement last_fact(ctx.db, "SELECT coalesce(max(fact_id), 0) FROM facts");

  std::int64_t watermark = std::stoll(state.get("", "seq").value_or("0"));
  newest.executeStep();
  const std::int64_t hi = newest.getColumn(0).getInt64();
  newest.reset();
  last_fact.executeStep();
  const std::int64_t first_fact = last_fact.getColumn(0).getInt64();
  last_fact.reset();

  std::int64_t events_read = 0;
  std::int64_t added = 0;
  while (watermark < hi) {
    ctx.cancel.check();
    const std::int64_t end = std::min(hi, watermark + kFactsChunkEvents);
    WriteTransaction transaction(ctx);
    read.reset();
    read.bind(1, watermark);
    read.bind(2, end);
    std::vector<store::FactRow> rows;
    while (read.executeStep()) {
      ++events_read;
      const std::string kind = read.getColumn(2).getString();
      const std::string agent = read.getColumn(3).getString();
      const std::string content = read.getColumn(5).getString();
      text::FactSource source;
      source.kind = kind;
      source.content = content;
      source.agent_id = agent;
      source.ts_us = read.getColumn(4).getInt64();
      // Owns what source.primary_key and primary_name view.
      const PrimaryEntity primary =
          kind != "prompt" && kind != "conversation" && kind != "response" && !read.isColumnNull(7)
              ? primary_entity(source, read.getColumn(7).getString())
              : PrimaryEntity{};
      source.primary_key = primary.key;
      source.primary_name = primary.name;
      std::string listener;
      if ((kind == "prompt" || kind == "conversation" || kind == "response") &&
          second_person_written(content)) {
        listener = listener_of(earlier, read.getColumn(1).getString(), source.ts_us,
                               read.getColumn(0).getInt64(), speaker_of(content, agent));
      }
      source.listener_name = listener;
      for (text::ExtractedFact& f : extract_facts(source)) {
        rows.push_back(fact_row(std::move(f), read.getColumn(1).getString(),
                                read.getColumn(0).getInt64(), read.getColumn(6).getString()));
      }
    }
    read.reset();
    for (const store::FactRow& row : rows) {
      facts.add(row);
      marks.mark(row.ns, row.entity_key);  // its summary lists what is known of it
    }
    added += static_cast<std::int64_t>(rows.size());
    watermark = end;
    state.set("", "seq", std::to_string(watermark));
    transaction.commit();
  }

  superseded.bind(1, first_fact);
  superseded.executeStep();
  const std::int64_t superseded_count = superseded.getColumn(0).getInt64();
  superseded.reset();
  links.bind(1, first_fact);
  links.executeStep();
  const std::int64_t link_count = links.getColumn(0).getInt64();
  links.reset();
  return {{"events_read", events_read},
          {"facts_added", added},
          {"facts_superseded", superseded_count},
          {"entity_links", link_count},
          {"watermark_seq", watermark}};
}

}  // namespace reflectd::jobs
