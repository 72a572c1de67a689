#include "bus/event_decoder.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_set>

#include "bus/kinds.hpp"
#include "common/sha256.hpp"
#include "common/timestamp.hpp"
#include "common/utf8.hpp"

namespace reflectd::bus {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

constexpr std::size_t kMaxIdChars = 128;
constexpr std::size_t kMaxNamespaceChars = 64;
constexpr std::size_t kMaxShortTextChars = 256;  // agent_id, episode_id, tags, entities.
constexpr std::size_t kMaxTags = 64;
constexpr std::size_t kMaxEntities = 256;
constexpr std::size_t kMaxRelations = 256;
constexpr std::int64_t kMaxEpochMs = 253402300799999;  // 9999-12-31T23:59:59.999Z

std::size_t utf8_chars(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n\f\v");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n\f\v");
  return text.substr(first, last - first + 1);
}

std::string json_of(element value) { return simdjson::minify(value); }

const char* type_name(element_type type) {
  switch (type) {
    case element_type::ARRAY: return "array";
    case element_type::OBJECT: return "object";
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE: return "number";
    case element_type::STRING: return "string";
    case element_type::BOOL: return "boolean";
    case element_type::NULL_VALUE: return "null";
  }
  return "value";
}

// The first key that appears twice in one object anywhere inside `value` (docs/WIRE.md: "no
// duplicate keys" at every depth; nlohmann would silently keep only one of them). Recursion is
// bounded by the parser's depth limit (1024).
std::optional<std::string> nested_duplicate_key(element value) {
  simdjson::dom::array items;
  object fields;
  if (value.get_array().get(items) == simdjson::SUCCESS) {
    for (element item : items) {
      if (auto found = nested_duplicate_key(item)) return found;
    }
  } else if (value.get_object().get(fields) == simdjson::SUCCESS) {
    std::unordered_set<std::string_view> seen;
    for (auto field : fields) {
      if (!seen.insert(field.key).second) return std::string(field.key.substr(0, 64));
      if (auto found = nested_duplicate_key(field.value)) return found;
    }
  }
  return std::nullopt;
}

// Collects the first rule violation of an event; later checks are skipped once one failed.
class Checker {
 public:
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  bool fail(std::string_view field, std::string_view rule) {
    if (error_.empty()) error_ = std::string(field) + ": " + std::string(rule);
    return false;
  }

  // A string with 1..max_chars characters (after trimming when `trimmed`), no NUL.
  bool text(element value, std::string_view field, std::size_t max_chars, std::string& out,
            std::size_t min_chars = 1, std::string_view rule_source = {}) {
    std::string_view s;
    if (value.get_string().get(s) != simdjson::SUCCESS) {
      return fail(field, std::string("must be a string, not ") + type_name(value.type()));
    }
    if (s.find('\0') != std::string_view::npos) return fail(field, "must not contain NUL");
    const std::size_t chars = utf8_chars(trim(s));
    if (chars < min_chars) {
      std::string rule = min_chars == 1
                             ? "must not be empty"
                             : "must be at least " + std::to_string(min_chars) + " characters";
      if (!rule_source.empty()) rule += " (" + std::string(rule_source) + ")";
      return fail(field, rule);
    }
    if (max_chars != 0 && utf8_chars(s) > max_chars) {
      return fail(field, "must be at most " + std::to_string(max_chars) + " characters");
    }
    out.assign(s);
    return true;
  }

  // A finite number in [lo, hi].
  bool number(element value, std::string_view field, double lo, double hi,
              std::optional<double>& out) {
    double d = 0;
    if (value.get_double().get(d) != simdjson::SUCCESS) {
      return fail(field, std::string("must be a number, not ") + type_name(value.type()));
    }
    if (!std::isfinite(d) || d < lo || d > hi) {
      return fail(field, range_rule(lo, hi));
    }
    out = d;
    return true;
  }

  bool integer(element value, std::string_view field, std::int64_t lo, std::int64_t hi,
               std::int64_t& out) {
    if (value.get_int64().get(out) != simdjson::SUCCESS) {
      return fail(field, "must be an integer");
    }
    if (out < lo || out > hi) {
      return fail(field, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    }
    return true;
  }

  bool one_of(element value, std::string_view field, std::string_view choices, std::string& out) {
    std::string_view s;
    if (value.get_string().get(s) != simdjson::SUCCESS) {
      return fail(field, "must be one of " + std::string(choices));
    }
    std::string_view rest = choices;
    while (!rest.empty()) {
      const auto bar = rest.find('|');
      if (rest.substr(0, bar) == s) {
        out.assign(s);
        return true;
      }
      if (bar == std::string_view::npos) break;
      rest.remove_prefix(bar + 1);
    }
    return fail(field, "must be one of " + std::string(choices));
  }

  bool object_of(element value, std::string_view field, object& out) {
    if (value.get_object().get(out) != simdjson::SUCCESS) {
      return fail(field, std::string("must be an object, not ") + type_name(value.type()));
    }
    return true;
  }

  bool string_list(element value, std::string_view field, std::size_t max_items,
                   std::size_t max_chars, bool typed_name) {
    simdjson::dom::array items;
    if (value.get_array().get(items) != simdjson::SUCCESS) {
      return fail(field, "must be an array of strings");
    }
    if (items.size() > max_items) {
      return fail(field, "must have at most " + std::to_string(max_items) + " items");
    }
    std::size_t i = 0;
    std::string item;
    for (element entry : items) {
      const std::string name = std::string(field) + "[" + std::to_string(i++) + "]";
      if (!text(entry, name, max_chars, item)) return false;
      if (typed_name) {
        const auto colon = item.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == item.size()) {
          return fail(name, R"(must be "type:name" (e.g. "file:src/ctx.cpp"))");
        }
      }
    }
    return true;
  }

 private:
  static std::string range_rule(double lo, double hi) {
    if (std::isinf(hi)) return "must be a finite number >= " + format(lo);
    return "must be a number in [" + format(lo) + ", " + format(hi) + "]";
  }
  static std::string format(double d) {
    std::string s = std::to_string(d);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
    return s;
  }

  std::string error_;
};

constexpr double kInf = std::numeric_limits<double>::infinity();

// seed 000 DecisionContent: title >= 1, target >= 3, rationale >= 10 characters, status enum.
void check_decision_content(Checker& check, object context) {
  std::string text;
  element value;
  if (context["title"].get(value) != simdjson::SUCCESS) {
    check.fail("context.title", "is required (DecisionContent.title)");
    return;
  }
  if (!check.text(value, "context.title", 0, text, 1, "DecisionContent.title")) return;
  if (context["target"].get(value) != simdjson::SUCCESS) {
    check.fail("context.target", "is required (DecisionContent.target)");
    return;
  }
  if (!check.text(value, "context.target", 0, text, 3, "DecisionContent.target")) return;
  if (context["rationale"].get(value) != simdjson::SUCCESS) {
    check.fail("context.rationale", "is required (DecisionContent.rationale)");
    return;
  }
  if (!check.text(value, "context.rationale", 0, text, 10, "DecisionContent.rationale")) return;
  if (context["status"].get(value) == simdjson::SUCCESS) {
    check.one_of(value, "context.status", "active|deprecated|superseded", text);
  }
}

// A SHODH Decision carries no DecisionContent (seed 000 requires title, target, rationale);
// it gets one derived from its content: the first line (at most kShodhTitleChars bytes, cut
// at a UTF-8 boundary) as title, "shodh:" and 16 hex digits of the content's SHA-256 as
// target (its own target, so it never conflicts with or supersedes another memory), and the
// content as rationale. Returns the context as JSON text, or "" after a check failure.
constexpr std::size_t kShodhTitleChars = 120;

std::string shodh_decision_context(Checker& check, const std::string& content,
                                   const std::string& content_hash) {
  constexpr std::size_t kMinRationaleChars = 10;  // DecisionContent.rationale
  if (utf8_chars(trim(content)) < kMinRationaleChars) {
    check.fail("content",
               "a SHODH Decision needs at least 10 characters: it is the decision's "
               "rationale (or send context with title, target and rationale)");
    return {};
  }
  std::string title = content.substr(0, content.find('\n'));
  if (title.size() > kShodhTitleChars) {
    title.resize(utf8_boundary(title, kShodhTitleChars));
  }
  if (utf8_chars(trim(title)) == 0) title = "Decision";
  return nlohmann::json{
      {"title", title}, {"target", "shodh:" + content_hash.substr(0, 16)}, {"rationale", content}}
      .dump();
}

// seed 000 ProposalContent: like DecisionContent, status draft|accepted|rejected|falsified and
// confidence in [0, 1].
void check_proposal_content(Checker& check, object context) {
  std::string text;
  element value;
  const std::array<std::pair<const char*, std::size_t>, 3> required{
      {{"title", 1}, {"target", 3}, {"rationale", 10}}};
  for (const auto& [name, min_chars] : required) {
    const std::string field = std::string("context.") + name;
    const std::string source = std::string("ProposalContent.") + name;
    if (context[name].get(value) != simdjson::SUCCESS) {
      check.fail(field, "is required (" + source + ")");
      return;
    }
    if (!check.text(value, field, 0, text, min_chars, source)) return;
  }
  if (context["status"].get(value) == simdjson::SUCCESS &&
      !check.one_of(value, "context.status", "draft|accepted|rejected|falsified", text)) {
    return;
  }
  std::optional<double> confidence;
  if (context["confidence"].get(value) == simdjson::SUCCESS) {
    check.number(value, "context.confidence", 0.0, 1.0, confidence);
  }
}

// seed 002 Relation: predicate, target (or target_id), optional weight in [0, 1].
void check_relations(Checker& check, element value) {
  simdjson::dom::array items;
  if (value.get_array().get(items) != simdjson::SUCCESS) {
    check.fail("relations", "must be an array of {predicate, target, weight} objects");
    return;
  }
  if (items.size() > kMaxRelations) {
    check.fail("relations", "must have at most " + std::to_string(kMaxRelations) + " items");
    return;
  }
  std::size_t i = 0;
  for (element entry : items) {
    const std::string base = "relations[" + std::to_string(i++) + "]";
    object relation;
    if (!check.object_of(entry, base, relation)) return;
    std::string text;
    element field;
    if (relation["predicate"].get(field) != simdjson::SUCCESS) {
      check.fail(base + ".predicate", "is required");
      return;
    }
    if (!check.text(field, base + ".predicate", kMaxShortTextChars, text)) return;
    if (relation["target"].get(field) != simdjson::SUCCESS &&
        relation["target_id"].get(field) != simdjson::SUCCESS) {
      check.fail(base + ".target", "is required");
      return;
    }
    if (!check.text(field, base + ".target", kMaxShortTextChars, text)) return;
    std::optional<double> weight;
    if (relation["weight"].get(field) == simdjson::SUCCESS &&
        !check.number(field, base + ".weight", 0.0, 1.0, weight)) {
      return;
    }
  }
}

// seed 002 Lifecycle and DecayProfile; the values override the configured profile.
void check_lifecycle(Checker& check, element value, store::LifecycleOverride& out) {
  object lifecycle;
  if (!check.object_of(value, "lifecycle", lifecycle)) return;
  element field;
  std::string text;
  if (lifecycle["decay"].get(field) == simdjson::SUCCESS) {
    object decay;
    if (!check.object_of(field, "lifecycle.decay", decay)) return;
    element item;
    if (decay["curve"].get(item) == simdjson::SUCCESS) {
      if (!check.one_of(item, "lifecycle.decay.curve", "exponential|linear|custom", text)) return;
      out.curve = text;
    }
    std::int64_t seconds = 0;
    // Bounded to ten years so µs arithmetic can never overflow.
    constexpr std::int64_t kMaxSeconds = 315'360'000;
    if (decay["half_life_seconds"].get(item) == simdjson::SUCCESS) {
      if (!check.integer(item, "lifecycle.decay.half_life_seconds", 1, kMaxSeconds, seconds)) {
        return;
      }
      out.half_life_s = seconds;
    }
    if (decay["max_age_seconds"].get(item) == simdjson::SUCCESS) {
      if (!check.integer(item, "lifecycle.decay.max_age_seconds", 0, kMaxSeconds, seconds)) {
        return;
      }
      out.max_age_s = seconds;
    }
    if (decay["min_salience"].get(item) == simdjson::SUCCESS &&
        !check.number(item, "lifecycle.decay.min_salience", 0.0, 1.0, out.min_salience)) {
      return;
    }
    if (decay["reinforcement_gain"].get(item) == simdjson::SUCCESS &&
        !check.number(item, "lifecycle.decay.reinforcement_gain", 0.0, 1.0,
                      out.reinforcement_gain)) {
      return;
    }
  }
  if (lifecycle["pinned"].get(field) == simdjson::SUCCESS) {
    bool pinned = false;
    if (field.get_bool().get(pinned) != simdjson::SUCCESS) {
      check.fail("lifecycle.pinned", "must be true or false");
      return;
    }
    out.pinned = pinned;
  }
  if (lifecycle["deletion_policy"].get(field) == simdjson::SUCCESS) {
    if (!check.one_of(field, "lifecycle.deletion_policy", "auto_prune|manual_only|never", text)) {
      return;
    }
    out.deletion_policy = text;
  }
}

// seed 000 ResolutionIntent.
void check_resolution(Checker& check, element value) {
  object resolution;
  if (!check.object_of(value, "resolution", resolution)) return;
  element field;
  std::string text;
  if (resolution["resolution_type"].get(field) != simdjson::SUCCESS) {
    check.fail("resolution.resolution_type", "is required (ResolutionIntent.resolution_type)");
    return;
  }
  if (!check.one_of(field, "resolution.resolution_type", "supersede|deprecate|abort", text)) {
    return;
  }
  const std::string type = text;
  // Seed 000 declares rationale and target_decision_ids without defaults: both are required.
  if (resolution["rationale"].get(field) != simdjson::SUCCESS) {
    check.fail("resolution.rationale", "is required (ResolutionIntent.rationale)");
    return;
  }
  if (!check.text(field, "resolution.rationale", 0, text, 1)) return;
  if (resolution["target_decision_ids"].get(field) != simdjson::SUCCESS) {
    check.fail("resolution.target_decision_ids",
               "is required (ResolutionIntent.target_decision_ids)");
    return;
  }
  if (!check.string_list(field, "resolution.target_decision_ids", kMaxEntities, kMaxIdChars,
                         false)) {
    return;
  }
  simdjson::dom::array ids;
  if (type != "abort" && field.get_array().get(ids) == simdjson::SUCCESS && ids.size() == 0) {
    check.fail("resolution.target_decision_ids",
               "must name at least one decision to " + type + " (ResolutionIntent)");
  }
}

bool valid_namespace(std::string_view ns) {
  if (ns.empty() || ns.size() > kMaxNamespaceChars) return false;
  return std::all_of(ns.begin(), ns.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == ':' ||
           c == '-';
  });
}

// Seed 004 (SHODH) memory objects are accepted as they are: an object without `kind` that
// uses one of SHODH's own field names is read as one, with `type` as its kind (default
// Observation, seed 004), `source_type` as its source and `created_at` as its timestamp.
// A wire-format field of the same meaning wins over the alias, and when the object has a
// `kind`, the SHODH names are ordinary unknown fields kept in metadata._unknown_fields, as
// before (docs/WIRE.md).
constexpr std::string_view kShodhDefaultType = "Observation";

struct NativeShape {
  bool shodh = false;
  bool alias_source = false;     // source_type stands for source
  bool alias_timestamp = false;  // created_at stands for timestamp

  // The wire-format key a sent key stands for.
  std::string_view canonical_key(std::string_view sent) const {
    if (!shodh) return sent;
    if (sent == "type") return "kind";
    if (sent == "source_type" && alias_source) return "source";
    if (sent == "created_at" && alias_timestamp) return "timestamp";
    return sent;
  }
};

NativeShape native_shape(object fields) {
  const auto has = [&](std::string_view key) {
    return fields.at_key(key).error() == simdjson::SUCCESS;
  };
  NativeShape shape;
  shape.shodh = !has("kind") &&
                (has("type") || has("created_at") || has("source_type") || has("content_hash"));
  shape.alias_source = shape.shodh && !has("source");
  shape.alias_timestamp = shape.shodh && !has("timestamp");
  return shape;
}

}  // namespace

EventDecoder::EventDecoder(const Clock& clock) : clock_(clock) {}

DecodedMessage EventDecoder::decode(std::string_view payload, std::size_t max_message_bytes,
                                    const Principal* sender) {
  DecodedMessage message;
  if (payload.size() > max_message_bytes) {
    message.error = "message: " + std::to_string(payload.size()) + " bytes exceeds the limit of " +
                    std::to_string(max_message_bytes) + " bytes (bus.max_message_bytes)";
    return message;
  }
  element root;
  if (const auto code = parser_.parse(payload.data(), payload.size(), true).get(root);
      code != simdjson::SUCCESS) {
    message.error = std::string("message: not valid JSON: ") + simdjson::error_message(code);
    return message;
  }
  const std::int64_t received_us = clock_.now_us();
  if (root.is_object()) {
    message.events.push_back(decode_event(root, 0, received_us, sender));
    return message;
  }
  simdjson::dom::array items;
  if (root.get_array().get(items) != simdjson::SUCCESS) {
    message.error = std::string("message: must be a JSON object or an array of objects, not ") +
                    type_name(root.type());
    return message;
  }
  message.batch = true;
  if (items.size() == 0 || items.size() > kMaxBatchEvents) {
    message.error = "message: a batch holds 1 to " + std::to_string(kMaxBatchEvents) +
                    " events, not " + std::to_string(items.size());
    return message;
  }
  message.events.reserve(items.size());
  std::size_t index = 0;
  for (element item : items)
    message.events.push_back(decode_event(item, index++, received_us, sender));
  return message;
}

namespace {

// What reading an event's fields found besides the record itself.
struct FieldsRead {
  bool have_kind = false;
  bool have_content = false;
  bool have_timestamp = false;
  bool have_context = false;
  bool have_metadata = false;
  element context_value;
  element metadata_value;
  nlohmann::json unknown = nlohmann::json::object();  // seed 004: kept, never dropped
};

// "timestamp": RFC 3339 with an offset, or integer epoch milliseconds.
void read_timestamp(Checker& check, std::string_view sent, element value,
                    store::EventRecord& event) {
  std::string_view s;
  std::int64_t ms = 0;
  if (value.get_string().get(s) == simdjson::SUCCESS) {
    if (auto us = parse_rfc3339_us(s)) {
      event.timestamp_us = *us;
    } else {
      check.fail(sent, "must be RFC 3339 with an offset (2024-12-01T09:00:00+00:00)");
    }
  } else if (value.get_int64().get(ms) == simdjson::SUCCESS) {
    if (ms < 0 || ms > kMaxEpochMs) {
      check.fail(sent, "epoch milliseconds must be between 0 and 253402300799999");
    } else {
      event.timestamp_us = ms * 1000;
    }
  } else {
    check.fail(sent, "must be an RFC 3339 string or integer epoch milliseconds");
  }
}

// The fields that say what the event is and where it belongs (kind, content, id, source,
// namespace, agent_id, timestamp, schema_version). False when `key` is none of them.
bool read_identity_field(Checker& check, std::string_view key, std::string_view sent, element value,
                         store::EventRecord& event, FieldsRead& read, DecodedEvent& result) {
  std::string_view s;
  if (key == "kind") {
    if (value.get_string().get(s) != simdjson::SUCCESS) {
      check.fail(sent, "must be a string, one of " + std::string(kind_list()));
    } else if (auto kind = find_kind(s)) {
      event.kind = kind->name;
      event.storage_class = kind->storage_class;
      read.have_kind = true;
    } else {
      check.fail(sent, "unknown kind '" + std::string(s).substr(0, 64) + "'; expected one of " +
                           std::string(kind_list()));
    }
  } else if (key == "content") {
    if (value.get_string().get(s) != simdjson::SUCCESS) {
      check.fail("content", std::string("must be a string, not ") + type_name(value.type()));
    } else if (s.size() > kMaxContentBytes) {
      check.fail("content",
                 "must be at most 262144 bytes (256 KiB), got " + std::to_string(s.size()));
    } else if (check.text(value, "content", 0, event.content)) {
      read.have_content = true;
    }
  } else if (key == "schema_version") {
    std::int64_t version = 0;
    if (value.get_int64().get(version) != simdjson::SUCCESS || version != 1) {
      check.fail("schema_version", "must be 1 (this daemon speaks wire format v1)");
    }
  } else if (key == "id") {
    if (check.text(value, "id", kMaxIdChars, event.uid)) result.id = event.uid;
  } else if (key == "source") {
    std::optional<std::string_view> source;
    if (value.get_string().get(s) == simdjson::SUCCESS) source = find_source(s);
    if (!source) {
      check.fail(sent, "must be one of " + std::string(source_list()));
    } else {
      event.source = *source;
    }
  } else if (key == "namespace") {
    if (value.get_string().get(s) != simdjson::SUCCESS || !valid_namespace(s)) {
      check.fail("namespace", "must be 1-64 characters of [A-Za-z0-9._:-]");
    } else {
      event.ns.assign(s);
    }
  } else if (key == "agent_id") {
    check.text(value, "agent_id", kMaxShortTextChars, event.agent_id);
  } else if (key == "timestamp") {
    read.have_timestamp = true;
    read_timestamp(check, sent, value, event);
  } else {
    return false;
  }
  return true;
}

// The other fields of wire format v1 (seed 004's scores, the episode, the lifecycle, the
// context and metadata objects); any field it does not know is kept in `read.unknown`.
void read_other_field(Checker& check, std::string_view key, element value,
                      store::EventRecord& event, FieldsRead& read) {
  object ignored;
  if (key == "context") {
    if (check.object_of(value, "context", ignored)) {
      read.context_value = value;
      read.have_context = true;
    }
  } else if (key == "tags") {
    if (check.string_list(value, "tags", kMaxTags, kMaxShortTextChars, false)) {
      event.tags_json = json_of(value);
    }
  } else if (key == "entities") {
    if (check.string_list(value, "entities", kMaxEntities, kMaxShortTextChars, true)) {
      event.entities_json = json_of(value);
    }
  } else if (key == "relations") {
    check_relations(check, value);
    if (!check.failed()) event.relations_json = json_of(value);
  } else if (key == "episode_id") {
    check.text(value, "episode_id", kMaxShortTextChars, event.episode_id);
  } else if (key == "sequence_number") {
    std::int64_t n = 0;
    if (check.integer(value, "sequence_number", 0, std::numeric_limits<std::int64_t>::max(), n)) {
      event.sequence_number = n;
    }
  } else if (key == "sensitivity") {
    check.one_of(value, "sensitivity", "public|low|medium|high|hyper", event.sensitivity);
  } else if (key == "confidence") {
    check.number(value, "confidence", 0.0, 1.0, event.confidence);
  } else if (key == "credibility") {
    check.number(value, "credibility", 0.0, 1.0, event.credibility);
  } else if (key == "importance") {
    check.number(value, "importance", 0.0, kInf, event.importance);
  } else if (key == "salience") {
    check.number(value, "salience", 0.0, kInf, event.salience);
  } else if (key == "emotion") {
    check.text(value, "emotion", 64, event.emotion);
  } else if (key == "emotional_valence") {
    check.number(value, "emotional_valence", -1.0, 1.0, event.emotional_valence);
  } else if (key == "emotional_arousal") {
    check.number(value, "emotional_arousal", 0.0, 1.0, event.emotional_arousal);
  } else if (key == "lifecycle") {
    check_lifecycle(check, value, event.lifecycle);
    if (!check.failed()) event.lifecycle_json = json_of(value);
  } else if (key == "resolution") {
    check_resolution(check, value);
    if (!check.failed()) event.resolution_json = json_of(value);
  } else if (key == "metadata") {
    if (check.object_of(value, "metadata", ignored)) {
      read.metadata_value = value;
      read.have_metadata = true;
    }
  } else if (key.size() > kMaxShortTextChars || key.find('\0') != std::string_view::npos) {
    check.fail("(field name)", "unknown field names must be 1-256 characters without NUL");
  } else {
    read.unknown[std::string(key)] = nlohmann::json::parse(json_of(value));
  }
}

// Unknown fields join a client's own metadata._unknown_fields (an event re-published from a
// store already has one); a clash would drop one of the two values, so it is refused.
void check_unknown_fields(Checker& check, const FieldsRead& read) {
  element prior_unknown;
  const bool have_prior_unknown =
      read.have_metadata && !read.unknown.empty() &&
      read.metadata_value.get_object().value_unsafe()["_unknown_fields"].get(prior_unknown) ==
          simdjson::SUCCESS;
  if (check.failed() || !have_prior_unknown) return;
  object prior;
  if (prior_unknown.get_object().get(prior) != simdjson::SUCCESS) {
    check.fail("metadata._unknown_fields",
               "must be an object when the event has unknown fields (they are stored there)");
    return;
  }
  for (auto field : prior) {
    if (read.unknown.contains(std::string(field.key))) {
      check.fail("metadata._unknown_fields." + std::string(field.key.substr(0, 64)),
                 "also sent as a top-level field; one of the two would be lost");
      return;
    }
  }
}

// The context and metadata columns of an accepted event: the client's objects, the SHODH
// decision context derived from its content, and the unknown fields under metadata.
void store_objects(const FieldsRead& read, std::string derived_context, store::EventRecord& event) {
  if (read.have_context) event.context_json = json_of(read.context_value);
  if (!derived_context.empty()) event.context_json = std::move(derived_context);
  if (!read.unknown.empty()) {
    nlohmann::json metadata = read.have_metadata
                                  ? nlohmann::json::parse(json_of(read.metadata_value))
                                  : nlohmann::json::object();
    metadata["_unknown_fields"].update(read.unknown);  // creates it, or merges into the client's
    event.metadata_json = metadata.dump();
  } else if (read.have_metadata) {
    event.metadata_json = json_of(read.metadata_value);
  }
}

}  // namespace

DecodedEvent EventDecoder::decode_event(element element_value, std::size_t index,
                                        std::int64_t received_us, const Principal* sender) {
  DecodedEvent result;
  result.index = index;
  object fields;
  if (element_value.get_object().get(fields) != simdjson::SUCCESS) {
    result.error =
        std::string("event: must be a JSON object, not ") + type_name(element_value.type());
    return result;
  }

  Checker check;
  store::EventRecord event;
  event.received_us = received_us;
  event.ns = "default";
  event.source = "agent";
  event.sensitivity = "low";
  FieldsRead read;
  std::unordered_set<std::string_view> seen;  // linear even for 100k fields
  const NativeShape shape = native_shape(fields);
  for (auto field : fields) {
    if (check.failed()) break;
    const std::string_view sent = field.key;  // errors name the field as the client sent it
    const std::string_view key = shape.canonical_key(sent);
    if (!seen.insert(sent).second) {
      check.fail(sent, "duplicate key");
      break;
    }
    const element value = field.value;
    if (auto duplicate = nested_duplicate_key(value)) {
      check.fail(sent, "duplicate key '" + *duplicate + "'");
      break;
    }
    if (!read_identity_field(check, key, sent, value, event, read, result)) {
      read_other_field(check, key, value, event, read);
    }
  }

  if (!check.failed() && !read.have_kind) {
    if (shape.shodh) {
      const auto observation = find_kind(kShodhDefaultType);
      event.kind = observation->name;
      event.storage_class = observation->storage_class;
    } else {
      check.fail("kind", "is required (or, in a SHODH memory object, type)");
    }
  }
  if (!check.failed() && !read.have_content) check.fail("content", "is required");
  std::string derived_context;  // a SHODH Decision's DecisionContent, derived from its content
  const bool decision_like = event.kind == "decision" || event.kind == "constraint" ||
                             event.kind == "assumption" || event.kind == "intervention";
  if (!check.failed() && (decision_like || event.kind == "proposal")) {
    const char* model = decision_like ? "DecisionContent" : "ProposalContent";
    if (!read.have_context && shape.shodh) {
      derived_context = shodh_decision_context(check, event.content, sha256_.hex(event.content));
    } else if (!read.have_context) {
      check.fail("context", "is required for kind " + event.kind + " (" + model + ")");
    } else if (decision_like) {
      check_decision_content(check, read.context_value.get_object().value_unsafe());
    } else {
      check_proposal_content(check, read.context_value.get_object().value_unsafe());
    }
  }
  check_unknown_fields(check, read);
  if (check.failed()) {
    result.error = check.error();
    return result;
  }

  store_objects(read, std::move(derived_context), event);
  if (!read.have_timestamp) event.timestamp_us = received_us;
  if (sender != nullptr) {
    if (std::string denied = authorize_event(event, *sender); !denied.empty()) {
      result.id = event.uid;
      result.error = std::move(denied);
      return result;
    }
  }
  event.content_hash = sha256_.hex(event.content);
  if (event.uid.empty()) {
    // Canonical JSON: keys sorted (nlohmann's std::map), no white space, UTF-8 as is.
    const nlohmann::json canonical = {
        {"agent_id", event.agent_id.empty() ? nlohmann::json() : nlohmann::json(event.agent_id)},
        {"content", event.content},
        {"kind", event.kind},
        {"namespace", event.ns},
        {"timestamp", event.timestamp_us}};
    event.uid = sha256_.hex(canonical.dump());
    event.uid_derived = true;
    result.id = event.uid;
  }
  result.event = std::move(event);
  return result;
}

}  // namespace reflectd::bus
