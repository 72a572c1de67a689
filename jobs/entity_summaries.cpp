#include "jobs/entity_summaries.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "common/timestamp.hpp"

namespace reflectd::jobs {
namespace {

constexpr std::size_t kMaxLineBytes = 140;

std::string first_line(const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    const auto a = line.find_first_not_of(" \t\r");
    if (a != std::string::npos) {
      line = line.substr(a, line.find_last_not_of(" \t\r") - a + 1);
      if (line.size() > kMaxLineBytes) {
        line.resize(kMaxLineBytes);
        while (!line.empty() && (static_cast<unsigned char>(line.back()) & 0xC0) == 0x80) line.pop_back();
        if (!line.empty() && (static_cast<unsigned char>(line.back()) & 0x80) != 0) line.pop_back();
        line += "...";
      }
      return line;
    }
    start = end + 1;
  }
  return {};
}

}  // namespace

nlohmann::json refresh_entity_summaries(JobContext& ctx) {
  SQLite::Database& db = ctx.db;
  {
    SQLite::Statement exists(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'entities'");
    if (!exists.executeStep()) return {{"summaries_refreshed", 0}, {"summaries_skipped", 0}};
  }
  SQLite::Statement entities(db, "SELECT entity_id, namespace, display_name, entity_type, mention_count, "
                                 "first_seen_us, last_seen_us, importance_score, coalesce(summary_text, '') "
                                 "FROM entities WHERE is_active = 1 AND (?1 = '' OR namespace = ?1) "
                                 "ORDER BY entity_id");
  entities.bind(1, ctx.ns);
  SQLite::Statement salient(db, "SELECT e.content FROM event_entities ee JOIN events e ON e.seq = ee.seq "
                                "WHERE ee.entity_id = ?1 AND e.status = 'active' "
                                "ORDER BY e.salience_base DESC, e.hit_count DESC, ee.seq DESC LIMIT 2");
  SQLite::Statement links(db, "SELECT t.canonical_key FROM entity_relationships r JOIN entities t ON "
                              "t.entity_id = r.target_id WHERE r.namespace = ?1 AND r.source_id = ?2 "
                              "ORDER BY r.strength DESC, t.canonical_key LIMIT 3");
  SQLite::Statement update(db, "UPDATE entities SET summary_text = ?2 WHERE entity_id = ?1");
  std::int64_t refreshed = 0;
  std::int64_t skipped = 0;
  while (entities.executeStep()) {
    if ((refreshed + skipped) % 1024 == 0) ctx.cancel.check();
    const std::int64_t id = entities.getColumn(0).getInt64();
    const std::string ns = entities.getColumn(1).getString();
    char importance[32];
    std::snprintf(importance, sizeof importance, "%.2f", entities.getColumn(7).getDouble());
    std::string summary = entities.getColumn(2).getString() + " (" + entities.getColumn(3).getString() +
                          "): " + std::to_string(entities.getColumn(4).getInt64()) + " mentions from " +
                          format_rfc3339_us(entities.getColumn(5).getInt64()).substr(0, 10) + " to " +
                          format_rfc3339_us(entities.getColumn(6).getInt64()).substr(0, 10) +
                          ", importance " + importance + ".";
    salient.reset();
    salient.bind(1, static_cast<std::int64_t>(id));
    std::string quotes;
    while (salient.executeStep()) {
      const std::string line = first_line(salient.getColumn(0).getString());
      if (!line.empty()) quotes += (quotes.empty() ? " Most salient: \"" : "; \"") + line + "\"";
    }
    summary += quotes.empty() ? "" : quotes + ".";
    links.reset();
    links.bind(1, ns);
    links.bind(2, static_cast<std::int64_t>(id));
    std::string linked;
    while (links.executeStep()) linked += (linked.empty() ? " Strongest links: " : ", ") + links.getColumn(0).getString();
    summary += linked.empty() ? "" : linked + ".";
    if (summary == entities.getColumn(8).getString()) {
      ++skipped;
      continue;
    }
    update.reset();
    update.bind(1, static_cast<std::int64_t>(id));
    update.bind(2, summary);
    update.exec();
    ++refreshed;
  }
  return {{"summaries_refreshed", refreshed}, {"summaries_skipped", skipped}};
}

}  // namespace reflectd::jobs
