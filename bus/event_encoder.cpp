#include "bus/event_encoder.hpp"

#include <array>
#include <optional>
#include <string>
#include <utility>

#include "common/timestamp.hpp"

namespace reflectd::bus {

nlohmann::json encode_event(const store::EventRecord& e) {
  nlohmann::json wire = {{"schema_version", e.schema_version},
                         {"kind", e.kind},
                         {"content", e.content},
                         {"namespace", e.ns},
                         {"source", e.source},
                         {"sensitivity", e.sensitivity},
                         {"timestamp", format_rfc3339_us(e.timestamp_us)}};
  if (!e.uid_derived) wire["id"] = e.uid;
  if (!e.agent_id.empty()) wire["agent_id"] = e.agent_id;
  if (!e.episode_id.empty()) wire["episode_id"] = e.episode_id;
  if (!e.emotion.empty()) wire["emotion"] = e.emotion;
  if (e.sequence_number) wire["sequence_number"] = *e.sequence_number;
  const std::array<std::pair<const char*, const std::optional<double>*>, 6> numbers{
      {{"confidence", &e.confidence},
       {"credibility", &e.credibility},
       {"importance", &e.importance},
       {"salience", &e.salience},
       {"emotional_valence", &e.emotional_valence},
       {"emotional_arousal", &e.emotional_arousal}}};
  for (const auto& [name, value] : numbers) {
    if (*value) wire[name] = **value;
  }
  const std::array<std::pair<const char*, const std::string*>, 7> objects{
      {{"context", &e.context_json},
       {"tags", &e.tags_json},
       {"entities", &e.entities_json},
       {"relations", &e.relations_json},
       {"lifecycle", &e.lifecycle_json},
       {"resolution", &e.resolution_json},
       {"metadata", &e.metadata_json}}};
  for (const auto& [name, text] : objects) {
    if (!text->empty()) wire[name] = nlohmann::json::parse(*text);
  }
  return wire;
}

}  // namespace reflectd::bus
