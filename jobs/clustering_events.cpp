#include "jobs/clustering_events.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <utility>

#include "jobs/clustering_text.hpp"
#include "jobs/entities.hpp"
#include "jobs/event_json.hpp"
#include "text/tokenizer.hpp"

namespace reflectd::jobs::clustering {

void extract_batch(std::vector<ReadEvent>& batch, const std::atomic<bool>& abandon) {
  EventJsonReader reader;
  for (ReadEvent& e : batch) {
    if (abandon.load(std::memory_order_relaxed)) return;
    if (e.extracted) continue;
    const nlohmann::json context = reader.extraction_context(e.context);
    const nlohmann::json entities = reader.extraction_entities(e.entities);
    const nlohmann::json relations = reader.extraction_relations(e.relations);
    e.extraction = text::extract_entities(
        {e.kind, e.content, e.agent, &context, &entities, &relations, e.cwd});
    e.tokens.clear();
    text::Tokenizer::scan(vectorized_text(e.content), [&e](const std::string& token) {
      e.tokens += token;
      e.tokens += '\0';
    });
    e.extracted = true;
  }
}

EventReader::EventReader(SQLite::Database& db, JobState& state)
    : state_(state),
      read_events_(db,
                   "SELECT seq, kind, ts_us, content, context, entities, relations, agent_id, "
                   "episode_id, sensitivity "
                   "FROM events WHERE namespace = ?1 AND seq > ?2 AND status = 'active' "
                   "ORDER BY seq LIMIT ?3") {}

void EventReader::start_namespace() {
  episode_cwd_.clear();
  read_cwd_.clear();
  carried_.clear();
}

void EventReader::start_chunk(const std::string& ns, std::int64_t watermark,
                              std::int64_t chunk_events) {
  // Stored events do not change, and no other job runs meanwhile, so the carried events are
  // what the statement would read again.
  const auto carried = static_cast<std::int64_t>(carried_.size());
  read_events_.reset();
  read_events_.bind(1, ns);
  read_events_.bind(2, carried_.empty() ? watermark : carried_.back().seq);
  read_events_.bind(3, std::max<std::int64_t>(0, chunk_events - carried));
}

void EventReader::end_chunk() {
  // read_cwd_ is ahead of episode_cwd_ by the carried events, which the next chunk needs.
  if (carried_.empty()) read_cwd_.clear();
  read_events_.reset();
}

// Under a contended write gate a chunk may yield after one event; dropping its read-ahead
// instead would make every chunk read and extract up to two batches again.
void EventReader::carry(std::vector<ReadEvent>& current, std::size_t stored,
                        std::vector<ReadEvent>& next) {
  std::deque<ReadEvent> kept;
  for (std::size_t i = stored; i < current.size(); ++i) kept.push_back(std::move(current[i]));
  for (ReadEvent& e : next) kept.push_back(std::move(e));
  for (ReadEvent& e : carried_) kept.push_back(std::move(e));
  carried_ = std::move(kept);
}

// Each event gets its episode's working directory as of that event (read_cwd_: episode_cwd_
// advanced over the events read but not stored yet).
bool EventReader::read_batch(const std::string& ns, std::vector<ReadEvent>& batch, bool& more) {
  batch.clear();
  while (batch.size() < kBatchEvents && !carried_.empty()) {
    batch.push_back(std::move(carried_.front()));
    carried_.pop_front();
  }
  while (batch.size() < kBatchEvents && more) {
    more = read_events_.executeStep();
    if (!more) break;
    ReadEvent& e = batch.emplace_back();
    e.seq = read_events_.getColumn(0).getInt64();
    e.kind = read_events_.getColumn(1).getString();
    e.ts = read_events_.getColumn(2).getInt64();
    e.content = read_events_.getColumn(3).getString();
    e.context = column_text(read_events_.getColumn(4));
    e.entities = column_text(read_events_.getColumn(5));
    e.relations = column_text(read_events_.getColumn(6));
    e.agent = read_events_.getColumn(7).isNull() ? "" : read_events_.getColumn(7).getString();
    e.sensitivity = stored_sensitivity_rank(read_events_.getColumn(9).getText());
    if (read_events_.getColumn(8).isNull()) continue;
    e.episode = read_events_.getColumn(8).getString();
    if (e.episode.empty()) continue;
    e.shown_cwd = text::working_directory(e.content);
    auto it = read_cwd_.find(e.episode);
    if (it == read_cwd_.end()) it = read_cwd_.emplace(e.episode, stored_cwd(ns, e.episode)).first;
    if (!e.shown_cwd.empty()) it->second = e.shown_cwd;
    e.cwd = it->second;
  }
  return !batch.empty();
}

// The episode's working directory as of the last event stored (cached, and across runs in
// job_state).
std::string& EventReader::stored_cwd(const std::string& ns, const std::string& episode) {
  auto it = episode_cwd_.find(episode);
  if (it == episode_cwd_.end()) {
    it = episode_cwd_.emplace(episode, state_.get(ns, "cwd:" + episode).value_or("")).first;
  }
  return it->second;
}

void EventReader::remember_working_directory(const std::string& ns, const ReadEvent& e) {
  if (e.shown_cwd.empty()) return;
  std::string& known = stored_cwd(ns, e.episode);
  if (known == e.shown_cwd) return;
  known = e.shown_cwd;
  state_.set(ns, "cwd:" + e.episode, known);
}

}  // namespace reflectd::jobs::clustering
