#include "jobs/consolidation_events.hpp"

#include <map>

#include "jobs/consolidation_text.hpp"
#include "model/formulas.hpp"

namespace reflectd::jobs::consolidation {

using nlohmann::json;

EventFields EventFieldReader::read(const std::optional<std::string>& context,
                                   const std::optional<std::string>& entities) {
  EventFields f;
  if (context) read_context(*context, f);
  if (entities) read_entities(*entities, f);
  return f;
}

void EventFieldReader::read_context(const std::string& text, EventFields& f) {
  const auto doc = json_.parse(text);
  if (!doc) {
    const json j = json::parse(text, nullptr, false);
    f.target = string_field(j, "target");
    f.success = truthy(j, "success");
    f.ends_trajectory = j.is_object() && (j.contains("exit_status") || j.contains("submission"));
    f.merge = j.is_object() && j.value("merge", false) == true;
    if (j.is_object()) {
      if (const auto files = j.find("files"); files != j.end() && files->is_array()) {
        for (const auto& file : *files) {
          if (file.is_string()) f.files.push_back(file.get<std::string>());
        }
      }
    }
    return;
  }
  simdjson::dom::object object;
  if (doc->get_object().get(object) != simdjson::SUCCESS) return;
  std::string_view text_value;
  if (const auto target = last_field(object, "target");
      target && target->get_string().get(text_value) == simdjson::SUCCESS) {
    f.target = std::string(text_value);
  }
  if (const auto success = last_field(object, "success")) {
    bool flag = false;
    double number = 0;
    if (success->get_bool().get(flag) == simdjson::SUCCESS) {
      f.success = flag;
    } else if (success->is_number() && success->get_double().get(number) == simdjson::SUCCESS) {
      f.success = number > 0.7;
    }
  }
  f.ends_trajectory = last_field(object, "exit_status") || last_field(object, "submission");
  if (const auto merge = last_field(object, "merge")) {
    bool flag = false;
    f.merge = merge->get_bool().get(flag) == simdjson::SUCCESS && flag;
  }
  simdjson::dom::array list;
  if (const auto files = last_field(object, "files");
      files && files->get_array().get(list) == simdjson::SUCCESS) {
    for (const simdjson::dom::element file : list) {
      if (file.get_string().get(text_value) == simdjson::SUCCESS) {
        f.files.emplace_back(text_value);
      }
    }
  }
}

void EventFieldReader::read_entities(const std::string& text, EventFields& f) {
  constexpr std::string_view kFile = "file:";
  const auto doc = json_.parse(text);
  if (!doc) {
    const json j = json::parse(text, nullptr, false);
    if (!j.is_array()) return;
    for (const auto& e : j) {
      if (e.is_string() && e.get_ref<const std::string&>().starts_with(kFile)) {
        f.files.push_back(e.get_ref<const std::string&>().substr(kFile.size()));
      }
    }
    return;
  }
  simdjson::dom::array list;
  if (doc->get_array().get(list) != simdjson::SUCCESS) return;
  std::string_view entity;
  for (const simdjson::dom::element e : list) {
    if (e.get_string().get(entity) == simdjson::SUCCESS && entity.starts_with(kFile)) {
      f.files.emplace_back(entity.substr(kFile.size()));
    }
  }
}

std::string conventional_scope(std::string_view content) {
  return std::string(conventional_commit_scope(first_line(content, 200)));
}

std::string module_of_files(const std::vector<std::string>& files) {
  std::map<std::string_view, int> counts;
  for (std::string_view path : files) {
    while (path.starts_with("/")) path.remove_prefix(1);
    const auto slash = path.find('/');
    if (slash == std::string_view::npos || slash == 0) continue;
    ++counts[path.substr(0, slash)];
  }
  std::string_view best;
  int best_count = 0;
  for (const auto& [module, count] : counts) {
    if (count > best_count) {
      best = module;
      best_count = count;
    }
  }
  return std::string(best);
}

std::string valid_target(const std::string& target) {
  return target.size() >= 3 ? target : std::string{};
}

std::string own_target(const EventFields& fields, std::string_view content) {
  std::string own = valid_target(fields.target);
  if (own.empty()) own = valid_target(conventional_scope(content));
  if (own.empty()) own = valid_target(module_of_files(fields.files));
  return own;
}

double kind_weight(const ConsolidationParams& p, std::string_view kind, bool success) {
  if (kind == "commit_change") return p.weight_commit_change;
  if (kind == "decision") return p.weight_decision;
  if (kind == "error") return p.weight_error;
  if (kind == "result") return success ? p.weight_result_success : p.weight_result_other;
  if (kind == "call") return p.weight_call;
  if (kind == "task") return p.weight_task;
  if (kind == "prompt") return p.weight_prompt;
  return 0.0;
}

EventEvidence event_evidence(const ConsolidationParams& p, std::string_view kind,
                             const std::string& content, const EventFields& fields) {
  EventEvidence e;
  e.success = kind == "result" && fields.success;
  e.problem = kind == "error" ? content : labelled_line(content, "Problem:");
  const bool problem_solution =
      !labelled_line(content, "Problem:").empty() && !labelled_line(content, "Solution:").empty();
  e.weight = kind_weight(p, kind, e.success) + (problem_solution ? p.weight_problem_solution : 0.0);
  return e;
}

}  // namespace reflectd::jobs::consolidation
