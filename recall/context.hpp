#pragma once
// `context` (seed 003 CompressedContext): what recall finds for a question, as prompt-ready
// text within a token budget, in three tiers (docs/RECALL.md, "Context"):
//   hot   the best hits, whole (white space folded), with absolute dates: each relative time
//         expression is followed by its date ("yesterday [7 May 2023]")
//   warm  the episode neighbours of the three best hits, and the summaries of the entities
//         the question named
//   cold  one-line pointers (id, date, first words) to the next hits
// Every item starts with its id in brackets; `sources` lists the ids in the order they
// appear. Tokens are estimated as ceil(code points / 4), so context_text never holds more
// than 4 characters per counted token; total_tokens <= max_tokens always.
//
// Thread-safety and errors: as recall::Recaller (same connection, same thread).

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "recall/recall.hpp"

namespace reflectd::recall {

inline constexpr std::int64_t kMinContextTokens = 50;
inline constexpr std::int64_t kMaxContextTokens = 32000;

/// The token estimate of `text`: ceil(code points / 4).
std::int64_t estimate_tokens(std::string_view text);

struct ContextRequest {
  RecallRequest recall;            ///< Its limit and offset are set by build_context.
  std::int64_t max_tokens = 1000;  ///< [kMinContextTokens, kMaxContextTokens]
};

struct CompressedContext {
  std::string context_text;
  std::int64_t total_tokens = 0;
  std::int64_t hot_count = 0, warm_count = 0, cold_count = 0;
  std::vector<std::string> sources;  ///< Event ids (and "entity:<key>"), in order of appearance.
  std::vector<std::int64_t> event_seqs;  ///< The seqs of the events shown in full (accesses).
  std::int64_t indexed_through_seq = 0;
  std::int64_t lag_events = 0;
};

/// Parses {"text","namespace","max_tokens", and recall's filters}; errors name the field.
std::variant<ContextRequest, RecallError> context_request_from_json(const nlohmann::json& request);

/// Builds the context with `recaller` (and its statements for the warm tier).
std::variant<CompressedContext, RecallError> build_context(Recaller& recaller,
                                                           const ContextRequest& request,
                                                           const ReadScope& scope,
                                                           std::int64_t now_us);

/// {"ok":true,"context_text","total_tokens","hot_count","warm_count","cold_count","sources",
///  "indexed_through_seq","lag_events"}.
nlohmann::json to_json(const CompressedContext& context);

}  // namespace reflectd::recall
