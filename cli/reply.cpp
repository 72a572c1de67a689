#include "cli/reply.hpp"

#include <nlohmann/json.hpp>

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

EventOutcome outcome_of_result(const json& result) {
  const std::string status = result.value("status", "");
  if (status == "stored") return {Outcome::kStored, {}};
  if (status == "duplicate") return {Outcome::kDuplicate, {}};
  std::string error = result.value("error", "");
  if (status != "rejected") error = "unexpected result in the daemon's reply: " + result.dump();
  return {Outcome::kRejected, error.empty() ? "rejected (no reason given)" : std::move(error)};
}

int severity(Outcome outcome) {
  switch (outcome) {
    case Outcome::kDuplicate: return 0;
    case Outcome::kStored: return 1;
    case Outcome::kRejected: return 2;
  }
  return 2;
}

std::vector<EventOutcome> reject_all(std::size_t count, const std::string& error) {
  return std::vector<EventOutcome>(count, EventOutcome{Outcome::kRejected, error});
}

}  // namespace

std::vector<EventOutcome> outcomes_of_reply(std::string_view body, std::size_t event_count) {
  const json reply = json::parse(body, nullptr, false);
  if (reply.is_discarded() || !reply.is_object()) {
    return reject_all(event_count, "the daemon's reply is not a JSON object");
  }
  if (const auto error = reply.find("error"); error != reply.end() && error->is_string()) {
    return reject_all(event_count, error->get<std::string>());
  }
  const auto results = reply.find("results");
  if (results == reply.end() || !results->is_array()) {
    return reject_all(event_count, "the daemon's reply has no results");
  }
  std::vector<EventOutcome> outcomes(event_count);
  std::vector<bool> seen(event_count, false);
  for (std::size_t position = 0; position < results->size(); ++position) {
    const json& result = (*results)[position];
    if (!result.is_object()) continue;
    std::size_t slot = position;
    if (const auto index = result.find("index");
        index != result.end() && index->is_number_unsigned()) {
      slot = index->get<std::size_t>();
    }
    if (event_count == 1) slot = 0;
    if (slot >= event_count) continue;
    EventOutcome outcome = outcome_of_result(result);
    if (!seen[slot] || severity(outcome.outcome) > severity(outcomes[slot].outcome)) {
      outcomes[slot] = std::move(outcome);
    }
    seen[slot] = true;
  }
  for (std::size_t slot = 0; slot < event_count; ++slot) {
    if (!seen[slot])
      outcomes[slot] = {Outcome::kRejected, "the daemon's reply has no result for this event"};
  }
  return outcomes;
}

}  // namespace reflectd::cli
