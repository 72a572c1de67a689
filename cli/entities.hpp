#pragma once
// `reflectctl entities [--namespace NS] [--top K] [--type T]` ({"cmd":"entities"}: the most
// important entities) and `reflectctl clusters [--namespace NS] [--limit N]`
// ({"cmd":"clusters"}: the largest event clusters) as tables.
//
// Error policy: run_entities()/run_clusters() print every problem to stderr and return an
// exit status. Thread-safety: call from one thread at a time.

#include <string>

#include <nlohmann/json.hpp>

#include "cli/control.hpp"

namespace reflectd::cli {

struct EntitiesOptions {
  ControlOptions control;
  std::string ns;
  std::string type;
  int top = 20;
};

struct ClustersOptions {
  ControlOptions control;
  std::string ns;
  int limit = 20;
};

nlohmann::json entities_request(const EntitiesOptions& options);
std::string format_entities_table(const nlohmann::json& reply);
int run_entities(const EntitiesOptions& options);

nlohmann::json clusters_request(const ClustersOptions& options);
std::string format_clusters_table(const nlohmann::json& reply);
int run_clusters(const ClustersOptions& options);

}  // namespace reflectd::cli
