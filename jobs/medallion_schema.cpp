// Seed 001's schema as reflectd checks it (jobs/medallion.hpp): the configured scopes, the
// validation every stored medallion passes and the scope query semantics.
#include <algorithm>
#include <stdexcept>

#include "common/timestamp.hpp"
#include "jobs/medallion.hpp"
#include "jobs/medallion_text.hpp"

namespace reflectd::jobs {
namespace {

using medallion::split;
using medallion::utf8_chars;
using nlohmann::json;

void require_string(const json& object, const char* key, const std::string& where,
                    std::vector<std::string>& errors) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string()) {
    errors.emplace_back(where + "." + key + ": required string");
  }
}

void require_string_list(const json& object, const char* key, const std::string& where,
                         std::vector<std::string>& errors, bool optional = false) {
  if (!object.is_object() || !object.contains(key) || (optional && object[key].is_null())) {
    if (!optional) errors.emplace_back(where + "." + key + ": required array of strings");
    return;
  }
  const json& list = object[key];
  if (!list.is_array() ||
      !std::all_of(list.begin(), list.end(), [](const json& v) { return v.is_string(); })) {
    errors.emplace_back(where + "." + key + ": must be an array of strings");
  }
}

}  // namespace

MedallionScope parse_medallion_scope(const std::string& text) {
  MedallionScope scope;
  for (const auto& part : split(text, ';')) {
    const auto equals = part.find('=');
    if (equals == std::string::npos)
      throw std::invalid_argument("'" + part + "': expected key=value");
    const std::string key = part.substr(0, equals);
    const std::string value = part.substr(equals + 1);
    if (key == "name") {
      scope.name = value;
    } else if (key == "namespace") {
      scope.ns = value;
    } else if (key == "nodes") {
      scope.graph_nodes = split(value, ',');
    } else if (key == "tags") {
      scope.tags = split(value, ',');
    } else {
      throw std::invalid_argument("unknown scope field '" + key +
                                  "' (name, namespace, nodes, tags)");
    }
  }
  if (scope.name.empty()) throw std::invalid_argument("a scope needs name=<id>");
  if (scope.graph_nodes.empty() && scope.tags.empty()) {
    throw std::invalid_argument("scope " + scope.name + " needs nodes= or tags=");
  }
  return scope;
}

std::vector<std::string> validate_medallion(const json& m) {
  std::vector<std::string> errors;
  if (!m.is_object()) return {"medallion: must be an object"};
  const json meta = m.value("meta", json());
  for (const char* key :
       {"medallion_id", "schema_version", "model", "created_at", "updated_at", "status"}) {
    require_string(meta, key, "meta", errors);
  }
  if (errors.empty()) {
    const auto status = meta["status"].get<std::string>();
    if (status != "active" && status != "stale" && status != "superseded") {
      errors.emplace_back("meta.status: must be active, stale or superseded");
    }
    const auto created = parse_rfc3339_us(meta["created_at"].get<std::string>());
    const auto updated = parse_rfc3339_us(meta["updated_at"].get<std::string>());
    if (!created || !updated) {
      errors.emplace_back("meta.created_at/updated_at: must be ISO 8601 timestamps");
    } else if (*updated < *created) {
      errors.emplace_back("meta.updated_at: must be >= created_at");
    }
    for (const char* key : {"knowledge_min_ts", "knowledge_max_ts"}) {
      if (meta.contains(key) && !meta[key].is_null() &&
          (!meta[key].is_string() || !parse_rfc3339_us(meta[key].get<std::string>()))) {
        errors.emplace_back(std::string("meta.") + key + ": must be an ISO 8601 timestamp or null");
      }
    }
  }
  const json scope = m.value("scope", json());
  require_string_list(scope, "graph_nodes", "scope", errors);
  require_string_list(scope, "tags", "scope", errors);
  const json summary = m.value("summary", json());
  require_string(summary, "high_level", "summary", errors);
  if (summary.is_object() && summary.contains("high_level") && summary["high_level"].is_string() &&
      utf8_chars(summary["high_level"].get<std::string>()) > kHighLevelMaxChars) {
    errors.emplace_back("summary.high_level: at most 300 characters");
  }
  if (summary.is_object() && summary.contains("subsystems")) {
    for (const auto& sub : summary["subsystems"]) {
      require_string(sub, "name", "summary.subsystems[]", errors);
      require_string(sub, "notes", "summary.subsystems[]", errors);
      const std::string status = sub.is_object() ? sub.value("status", "") : "";
      if (status != "unknown" && status != "stable" && status != "in_progress" &&
          status != "deprecated") {
        errors.emplace_back(
            "summary.subsystems[].status: must be unknown, stable, in_progress or deprecated");
      }
    }
  }
  for (const auto& d : m.value("decisions", json::array())) {
    for (const char* key : {"id", "statement", "rationale"})
      require_string(d, key, "decisions[]", errors);
    if (!d.is_object() || !d.contains("confidence") || !d["confidence"].is_number() ||
        d["confidence"].get<double>() < 0.0 || d["confidence"].get<double>() > 1.0) {
      errors.emplace_back("decisions[].confidence: must be between 0.0 and 1.0");
    }
  }
  for (const auto& q : m.value("open_questions", json::array())) {
    for (const char* key : {"id", "question"}) require_string(q, key, "open_questions[]", errors);
    require_string_list(q, "blocked_on", "open_questions[]", errors);
    const std::string priority = q.is_object() ? q.value("priority", "") : "";
    if (priority != "low" && priority != "medium" && priority != "high") {
      errors.emplace_back("open_questions[].priority: must be low, medium or high");
    }
  }
  const json affordances = m.value("affordances", json());
  if (!affordances.is_object()) {
    errors.emplace_back("affordances: required object");
  } else {
    require_string_list(affordances, "recommended_entry_points", "affordances", errors);
    require_string_list(affordances, "avoid_repeating", "affordances", errors);
    require_string_list(affordances, "invariants", "affordances", errors, true);
  }
  return errors;
}

bool scope_matches(const std::vector<std::string>& query_nodes,
                   const std::vector<std::string>& query_tags,
                   const std::vector<std::string>& medallion_nodes,
                   const std::vector<std::string>& medallion_tags) {
  const bool nodes = std::all_of(query_nodes.begin(), query_nodes.end(), [&](const std::string& n) {
    return std::find(medallion_nodes.begin(), medallion_nodes.end(), n) != medallion_nodes.end();
  });
  const bool tags =
      query_tags.empty() ||
      std::any_of(query_tags.begin(), query_tags.end(), [&](const std::string& t) {
        return std::find(medallion_tags.begin(), medallion_tags.end(), t) != medallion_tags.end();
      });
  return nodes && tags;
}

}  // namespace reflectd::jobs
