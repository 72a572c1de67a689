#pragma once
// `reflectctl search TEXT [--namespace NS] [--kind K] [--limit N]`: full-text search of the
// events ({"cmd":"search"}), best first, as a table of score, kind, status, id and preview.
//
// Error policy: run_search() prints every problem to stderr and returns an exit status.
// Thread-safety: call from one thread at a time.

#include <string>

#include <nlohmann/json.hpp>

#include "cli/control.hpp"

namespace reflectd::cli {

struct SearchOptions {
  ControlOptions control;
  std::string text;
  std::string ns;    ///< Empty: every namespace.
  std::string kind;  ///< Empty: every kind.
  int limit = 10;
};

nlohmann::json search_request(const SearchOptions& options);
std::string format_search_table(const nlohmann::json& reply);
int run_search(const SearchOptions& options);

}  // namespace reflectd::cli
