#pragma once
// The benchmarks' synthetic event streams, built from the real ones: event i is the real event
// (i mod n) of libzmq-commits.jsonl then swe-agent-trajectories.jsonl (n = 9,052) with the id
// "bench:<i>" and its timestamp moved (i div n) days later. From the second pass on, its
// content becomes its own first line plus the first lines of real events (7919 i + 13) mod n
// and (104729 i + 7) mod n, so documents stay distinct while their words, entities and
// namespaces stay real, and its episode_id (if any) gets the suffix "~<i div n>". Every run
// builds byte-identical input. Used by bench_jobs and bench_recall.
//
// Errors: std::runtime_error (a file missing, an event rejected); SQLite::Exception.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.hpp"

namespace reflectd::bench {

/// The real events of `dir` (libzmq-commits.jsonl, then swe-agent-trajectories.jsonl).
std::vector<nlohmann::json> read_corpus(const std::string& dir);

/// Appends synthetic events first .. first+count-1 built from `corpus` to the database at
/// `path` (migrated on open), through the wire decoder and EventStore, 5,000 per transaction.
void store_events(const std::string& path, const std::vector<nlohmann::json>& corpus,
                  std::uint64_t first, std::uint64_t count, const Clock& clock);

}  // namespace reflectd::bench
