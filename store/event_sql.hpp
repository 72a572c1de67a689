#pragma once
// The events table's SQL that more than one statement of store/ writes: the columns of a whole
// row as the writer inserts it (all but seq, in the order of EventStore's bind positions ?1..?39)
// and the namespace's newest event time. Used by EventStore (event_store.cpp) and by a
// revision's copy of a row (event_revision.cpp), so the two inserts cannot drift apart.

#include <string_view>

namespace reflectd::store {

inline constexpr std::string_view kEventRowColumns =
    "uid, uid_derived, namespace, kind, storage_class, source, agent_id, ts_us, received_us, "
    "content, content_hash, context, tags, entities, relations, episode_id, sequence_number, "
    "sensitivity, confidence, credibility, importance, salience, emotion, emotional_valence, "
    "emotional_arousal, lifecycle, resolution, metadata, schema_version, salience_base, "
    "salience_ref_us, decay_curve, half_life_s, min_salience, max_age_s, reinforcement_gain, "
    "pinned, deletion_policy, archive_at_us";

// What migration 11's trigger events_namespace_inserted did for each stored event: ?1 the
// namespace, ?2 the event's time (µs UTC).
inline constexpr const char* kRaiseNamespaceTime = R"sql(
INSERT INTO event_namespaces (namespace, max_ts_us) VALUES (?1, ?2)
ON CONFLICT (namespace) DO UPDATE SET max_ts_us = excluded.max_ts_us
WHERE excluded.max_ts_us > event_namespaces.max_ts_us)sql";

}  // namespace reflectd::store
