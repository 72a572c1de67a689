#pragma once
// The stored shape of one event: the wire envelope (docs/WIRE.md) after
// validation and normalisation. Produced by bus::EventDecoder, consumed by store::EventStore.

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace reflectd::store {

/// Seed 002 Sensitivity levels in order; the index is the rank compared against clearances.
inline constexpr std::array<std::string_view, 5> kSensitivityLevels = {"public", "low", "medium",
                                                                       "high", "hyper"};
/// Rank of the highest level (hyper).
inline constexpr int kMaxSensitivityRank = 4;

/// Rank of a level name (0 = public ... 4 = hyper), nullopt for anything else. Pure.
constexpr std::optional<int> sensitivity_rank(std::string_view level) {
  for (int i = 0; i <= kMaxSensitivityRank; ++i) {
    if (kSensitivityLevels[i] == level) return i;
  }
  return std::nullopt;
}

/// Level name of a rank (clamped to 0..4), NUL-terminated for SQLite binds. Pure.
constexpr const char* sensitivity_level(int rank) {
  return kSensitivityLevels[std::clamp(rank, 0, kMaxSensitivityRank)].data();
}

/// Storage class of a kind (seed 000 KIND_STORAGE_MAP): semantic kinds are long-lived
/// knowledge, everything else is episodic.
enum class StorageClass { kEpisodic, kSemantic };

/// Text of a StorageClass as stored in events.storage_class.
constexpr const char* to_string(StorageClass c) {
  return c == StorageClass::kSemantic ? "semantic" : "episodic";
}

/// Per-event overrides of the configured decay profile (the event's `lifecycle`, seed 002).
struct LifecycleOverride {
  std::optional<std::string> curve;
  std::optional<std::int64_t> half_life_s;
  std::optional<double> min_salience;
  std::optional<std::int64_t> max_age_s;
  std::optional<double> reinforcement_gain;
  std::optional<bool> pinned;
  std::optional<std::string> deletion_policy;
};

/// One validated event. Optional JSON-valued fields hold minified JSON text, empty when
/// absent (stored as NULL).
struct EventRecord {
  std::string uid;           ///< Client idempotency key, or the derived SHA-256 hex.
  bool uid_derived = false;  ///< True when the daemon derived `uid`.
  std::string ns;            ///< namespace.
  std::string kind;          ///< Canonical snake_case kind.
  StorageClass storage_class = StorageClass::kEpisodic;
  std::string source;             ///< Canonical source.
  std::string agent_id;           ///< Empty when absent.
  std::int64_t timestamp_us = 0;  ///< Event time, µs since the Unix epoch, UTC.
  std::int64_t received_us = 0;   ///< When the daemon decoded it, µs since the epoch, UTC.
  std::string content;
  std::string content_hash;  ///< SHA-256 hex of `content` (seed 004 content_hash).
  std::string context_json;
  std::string tags_json;
  std::string entities_json;
  std::string relations_json;
  std::string lifecycle_json;
  std::string resolution_json;
  std::string metadata_json;
  std::string episode_id;
  std::optional<std::int64_t> sequence_number;
  std::string sensitivity;  ///< public|low|medium|high|hyper.
  std::optional<double> confidence;
  std::optional<double> credibility;
  std::optional<double> importance;
  std::optional<double> salience;
  std::string emotion;
  std::optional<double> emotional_valence;
  std::optional<double> emotional_arousal;
  std::int64_t schema_version = 1;
  LifecycleOverride lifecycle;  ///< Parsed from lifecycle_json.
};

}  // namespace reflectd::store

namespace reflectd::store {

/// One event of a received message on its way to the writer: either a validated event or a
/// rejection decided before storage (bus::EventDecoder produces these).
struct EventEntry {
  std::size_t index = 0;             ///< Position in its message's batch (0 for a lone object).
  std::optional<EventRecord> event;  ///< The validated event; empty when rejected.
  std::string id;                    ///< Client or derived id, when known.
  std::string error;                 ///< Rule violation; empty when `event` is set.
};

}  // namespace reflectd::store
