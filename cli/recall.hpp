#pragma once
// The read commands of reflectctl:
//   recall TEXT   {"cmd":"recall"}: the events that answer a question, best first, each whole
//   context TEXT  {"cmd":"context"}: prompt-ready text within a token budget
//   get ID...     {"cmd":"get"}: events in full by id
//   episode ID    {"cmd":"episode"}: an episode in sequence order
//
// Error policy: run_*() print every problem to stderr and return an exit status.
// Thread-safety: call from one thread at a time.

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cli/control.hpp"

namespace reflectd::cli {

struct RecallOptions {
  ControlOptions control;
  std::string text;
  std::string ns;  ///< Empty: every namespace in scope.
  int limit = 10;
  int offset = 0;
  int max_tokens = 1000;  ///< context only
  bool include_archived = false;
};

struct GetOptions {
  ControlOptions control;
  std::vector<std::string> ids;
};

struct EpisodeOptions {
  ControlOptions control;
  std::string episode_id;
  std::string ns;
  int limit = 200;
};

nlohmann::json recall_request(const RecallOptions& options);
nlohmann::json context_request(const RecallOptions& options);
std::string format_recall(const nlohmann::json& reply);
std::string format_context(const nlohmann::json& reply);
std::string format_events(const nlohmann::json& reply);

int run_recall(const RecallOptions& options);
int run_context(const RecallOptions& options);
int run_get(const GetOptions& options);
int run_episode(const EpisodeOptions& options);

}  // namespace reflectd::cli
