#include "jobs/consolidation_stream_state.hpp"

#include <algorithm>
#include <functional>

namespace reflectd::jobs::consolidation {

using model::GapSquares;
using nlohmann::json;

std::string stream_id(const std::string& ns, const std::string& target) {
  return "proposal:" + ns + ":" + target;
}

void add_solution(std::vector<std::pair<std::int64_t, std::int64_t>>& top, std::int64_t ts,
                  std::int64_t seq) {
  top.emplace_back(ts, seq);
  std::sort(top.begin(), top.end(), std::greater<>());
  if (top.size() > kSolutions) top.resize(kSolutions);
}

std::pair<std::int64_t, std::int64_t> split_limbs(GapSquares v) {
  return {static_cast<std::int64_t>(v >> 64),
          static_cast<std::int64_t>(static_cast<std::uint64_t>(v))};
}

GapSquares join_limbs(std::int64_t hi, std::int64_t lo) {
  return static_cast<GapSquares>(hi) * (static_cast<GapSquares>(1) << 64) +
         static_cast<GapSquares>(static_cast<std::uint64_t>(lo));
}

StreamStates::StreamStates(SQLite::Database& db)
    : load_(db,
            "SELECT k.phase, k.status, k.scope, k.hit_count, coalesce(k.last_hit_us, 0), "
            "k.vitality, k.confidence, s.evidence, s.first_ts_us, s.last_ts_us, s.last_seq, "
            "s.gap_squares_hi, s.gap_squares_lo, s.solutions, s.unique_contexts FROM knowledge k "
            "LEFT JOIN consolidation_streams s ON s.decision_id = k.decision_id "
            "WHERE k.decision_id = ?1"),
      store_(db,
             "INSERT OR REPLACE INTO consolidation_streams (decision_id, evidence, first_ts_us, "
             "last_ts_us, last_seq, gap_squares_hi, gap_squares_lo, solutions, unique_contexts) "
             "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)") {}

void StreamStates::load(Stream& s) {
  SQLite::Statement& q = load_;
  q.reset();
  q.bind(1, s.id);
  if (q.executeStep()) {
    s.exists = true;
    s.phase = model::parse_phase(q.getColumn(0).getString()).value_or(model::Phase::kPattern);
    s.status = q.getColumn(1).getString();
    s.scope = model::parse_scope(q.getColumn(2).getString()).value_or(model::Scope::kLocal);
    s.use = {q.getColumn(3).getInt64(), q.getColumn(4).getInt64()};
    s.vitality = q.getColumn(5).getString();
    s.confidence = q.getColumn(6).getDouble();
    if (!q.getColumn(7).isNull()) {
      s.active = true;
      s.sums.count = q.getColumn(7).getInt64();
      s.sums.first_us = q.getColumn(8).getInt64();
      s.sums.last_us = q.getColumn(9).getInt64();
      s.last_seq = q.getColumn(10).getInt64();
      s.sums.gap_squares = join_limbs(q.getColumn(11).getInt64(), q.getColumn(12).getInt64());
      for (const auto& pair : json::parse(q.getColumn(13).getString())) {
        s.solutions.emplace_back(pair.at(0).get<std::int64_t>(), pair.at(1).get<std::int64_t>());
      }
      s.unique_contexts = q.getColumn(14).getInt64();
    }
  }
  q.reset();
}

void StreamStates::store(const Stream& s, const json& solutions) {
  SQLite::Statement& state = store_;
  state.reset();
  state.bind(1, s.id);
  state.bind(2, static_cast<std::int64_t>(s.sums.count));
  state.bind(3, static_cast<std::int64_t>(s.sums.first_us));
  state.bind(4, static_cast<std::int64_t>(s.sums.last_us));
  state.bind(5, static_cast<std::int64_t>(s.last_seq));
  const auto [hi, lo] = split_limbs(s.sums.gap_squares);
  state.bind(6, hi);
  state.bind(7, lo);
  state.bind(8, solutions.dump());
  state.bind(9, static_cast<std::int64_t>(s.unique_contexts));
  state.exec();
}

}  // namespace reflectd::jobs::consolidation
