#pragma once
// `reflectctl knowledge [--namespace NS] [--phase P] [--status S] [--limit N]`: the
// knowledge rows ({"cmd":"knowledge"}: canonical first, then emergent, then pattern; most
// frequent first) as a table of decision id, phase, status, vitality, confidence,
// frequency, target and title.
//
// Error policy: run_knowledge() prints every problem to stderr and returns an exit status;
// the formatter never throws (missing fields show as "-").
// Thread-safety: call from one thread at a time.

#include <string>

#include <nlohmann/json.hpp>

#include "cli/control.hpp"

namespace reflectd::cli {

struct KnowledgeOptions {
  ControlOptions control;
  std::string ns;      ///< Empty: every namespace.
  std::string phase;   ///< pattern|emergent|canonical; empty: every phase.
  std::string status;  ///< active|deprecated|superseded|draft|accepted|rejected|falsified.
  std::string kind;    ///< decision|constraint|assumption|intervention|proposal; empty: all.
  int limit = 50;
};

/// {"cmd":"knowledge","namespace":…,"kind":…,"phase":…,"status":…,"limit":…}.
nlohmann::json knowledge_request(const KnowledgeOptions& options);

/// The reply's "knowledge" rows as a table.
std::string format_knowledge_table(const nlohmann::json& reply);

/// Runs the command: kExitOk, kExitFailed, kExitUsage or kExitUnreachable.
int run_knowledge(const KnowledgeOptions& options);

}  // namespace reflectd::cli
