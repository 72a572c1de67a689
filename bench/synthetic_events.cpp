#include "bench/synthetic_events.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <stdexcept>

#include "bus/event_decoder.hpp"
#include "common/timestamp.hpp"
#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "store/database.hpp"
#include "store/event_store.hpp"

namespace reflectd::bench {
namespace {

using nlohmann::json;

constexpr std::array<const char*, 2> kDataFiles = {"libzmq-commits.jsonl",
                                                   "swe-agent-trajectories.jsonl"};

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

std::vector<json> read_corpus(const std::string& dir) {
  std::vector<json> events;
  for (const char* name : kDataFiles) {
    std::ifstream in(dir + "/" + name);
    if (!in) throw std::runtime_error("cannot open " + dir + "/" + name);
    std::string line;
    while (std::getline(in, line)) events.push_back(json::parse(line));
  }
  if (events.empty()) throw std::runtime_error("no events in " + dir);
  return events;
}

void store_events(const std::string& path, const std::vector<json>& corpus, std::uint64_t first,
                  std::uint64_t count, const Clock& clock) {
  auto db = store::open_database({path, "off", 5000}, store::Access::kWriter);
  store::EventStore events(db);
  bus::EventDecoder decoder(clock);
  const auto profiles = daemon::decay_profiles(config::defaults().decay);
  const std::uint64_t n = corpus.size();
  const std::uint64_t end = first + count;
  constexpr std::uint64_t kChunk = 5000;
  for (std::uint64_t begin = first; begin < end; begin += kChunk) {
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    for (std::uint64_t i = begin; i < std::min(end, begin + kChunk); ++i) {
      json e = corpus[i % n];
      const auto& other = corpus[(7919 * i + 13) % n];
      e["id"] = "bench:" + std::to_string(i);
      if (i >= n) {
        // Later passes: the subject of this event and of two others, so documents stay
        // distinct and clusters keep growing instead of collapsing into duplicates.
        const auto& third = corpus[(104729 * i + 7) % n];
        e["content"] = first_line(e["content"].get<std::string>()) + "\n" +
                       first_line(other["content"].get<std::string>()) + "\n" +
                       first_line(third["content"].get<std::string>());
        // Each pass is another run of the agents: an episode of pass p is "<episode_id>~<p>".
        // (One episode across every pass would be one trajectory 110 passes long at 1M
        // events, not a workload an agent produces.)
        if (const auto it = e.find("episode_id"); it != e.end() && it->is_string()) {
          *it = it->get<std::string>() + "~" + std::to_string(i / n);
        }
      }
      auto decoded = decoder.decode(e.dump(), 1 << 22);
      if (decoded.events.size() != 1 || !decoded.events[0].event) {
        throw std::runtime_error("event " + std::to_string(i) + " rejected");
      }
      store::EventRecord row = std::move(*decoded.events[0].event);
      row.timestamp_us += static_cast<std::int64_t>(i / n) * kDayUs;
      events.insert(row, store::resolve_lifecycle(row, profiles));
    }
    transaction.commit();
  }
}

}  // namespace reflectd::bench
