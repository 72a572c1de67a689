#include "jobs/event_json.hpp"

namespace reflectd::jobs {
namespace {

using nlohmann::json;
using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// Copies `object[key]` into `out[key]` when it is a string (a field of another type reads
// as absent in extract_entities(): string_field() returns "").
void copy_string(object from, std::string_view key, json& out) {
  std::string_view text;
  if (const auto value = last_field(from, key);
      value && value->get_string().get(text) == simdjson::SUCCESS) {
    out[std::string(key)] = std::string(text);
  }
}

// The strings of an array, in order (the rules skip its other elements).
json strings_of(array items) {
  json out = json::array();
  std::string_view text;
  for (const element item : items) {
    if (item.get_string().get(text) == simdjson::SUCCESS) out.push_back(std::string(text));
  }
  return out;
}

}  // namespace

std::optional<std::string> column_text(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return column.getString();
}

std::optional<element> last_field(object from, std::string_view key) {
  std::optional<element> found;
  for (const simdjson::dom::key_value_pair field : from) {
    if (field.key == key) found = field.value;
  }
  return found;
}

std::optional<element> EventJsonReader::parse(const std::string& text) {
  element doc;
  if (parser_.parse(text).get(doc) != simdjson::SUCCESS) return std::nullopt;
  return doc;
}

json EventJsonReader::extraction_context(const std::optional<std::string>& text) {
  if (!text) return {};
  const auto doc = parse(*text);
  if (!doc) return json::parse(*text, nullptr, false);
  object fields;
  if (doc->get_object().get(fields) != simdjson::SUCCESS) return {};
  json out = json::object();
  copy_string(fields, "target", out);
  copy_string(fields, "tool", out);
  array files;
  if (const auto value = last_field(fields, "files");
      value && value->get_array().get(files) == simdjson::SUCCESS) {
    out["files"] = strings_of(files);
  }
  return out;
}

json EventJsonReader::extraction_entities(const std::optional<std::string>& text) {
  if (!text) return {};
  const auto doc = parse(*text);
  if (!doc) return json::parse(*text, nullptr, false);
  array items;
  if (doc->get_array().get(items) != simdjson::SUCCESS) return {};
  return strings_of(items);
}

json EventJsonReader::extraction_relations(const std::optional<std::string>& text) {
  if (!text) return {};
  const auto doc = parse(*text);
  if (!doc) return json::parse(*text, nullptr, false);
  array items;
  if (doc->get_array().get(items) != simdjson::SUCCESS) return {};
  json out = json::array();
  for (const element item : items) {
    object relation;
    if (item.get_object().get(relation) != simdjson::SUCCESS) continue;
    json r = json::object();
    copy_string(relation, "predicate", r);
    copy_string(relation, "target", r);
    copy_string(relation, "target_id", r);
    double weight = 0;
    if (const auto value = last_field(relation, "weight");
        value && value->is_number() && value->get_double().get(weight) == simdjson::SUCCESS) {
      r["weight"] = weight;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace reflectd::jobs
