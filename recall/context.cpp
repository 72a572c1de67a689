#include "recall/context.hpp"

#include <set>

#include "text/time_expressions.hpp"

namespace reflectd::recall {
namespace {

using nlohmann::json;

// Hits recall is asked for: enough to fill the largest budget's cold tier.
constexpr std::int64_t kContextHits = 60;
// The hits whose episode neighbours form the warm tier.
constexpr std::size_t kWarmFrom = 3;
// Shares of the budget: hot items stop at 75%, warm at 90%, cold fill the rest.
constexpr double kHotShare = 0.75;
constexpr double kWarmShare = 0.90;
constexpr std::size_t kPointerBytes = 80;

std::size_t code_points(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1 : 0;
  return n;
}

std::string fold_space(std::string_view text) {
  std::string out;
  bool space = false;
  for (const char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

std::string who(const std::string& kind, const std::string& agent) {
  return agent.empty() ? kind : kind + ", " + agent;
}

class Builder {
 public:
  explicit Builder(std::int64_t max_tokens) : max_tokens_(max_tokens) {}

  // Adds `line` when it fits under `share` of the budget; false when it does not.
  bool add(const std::string& line, double share) {
    const std::int64_t tokens = estimate_tokens(line + "\n");
    const auto cap = static_cast<std::int64_t>(share * static_cast<double>(max_tokens_));
    if (used_ + tokens > std::min(cap, max_tokens_)) return false;
    text_ += line;
    text_ += '\n';
    used_ = estimate_tokens(text_);
    return true;
  }
  const std::string& text() const { return text_; }
  std::int64_t used() const { return used_; }

 private:
  std::int64_t max_tokens_;
  std::int64_t used_ = 0;
  std::string text_;
};

std::string item_line(const std::string& id, std::int64_t ts_us, const std::string& kind,
                      const std::string& agent, const std::string& content, bool redacted) {
  const std::string body =
      redacted ? content : fold_space(text::with_absolute_dates(content, ts_us));
  return "[" + id + "] " + text::format_day(ts_us) + " (" + who(kind, agent) + "): " + body;
}

}  // namespace

std::int64_t estimate_tokens(std::string_view text) {
  return static_cast<std::int64_t>((code_points(text) + 3) / 4);
}

std::variant<ContextRequest, RecallError> context_request_from_json(const json& request) {
  auto recall = recall_request_from_json(request);
  if (auto* error = std::get_if<RecallError>(&recall)) return *error;
  ContextRequest out;
  out.recall = std::get<RecallRequest>(std::move(recall));
  if (auto error =
          int_field(request, "max_tokens", kMinContextTokens, kMaxContextTokens, out.max_tokens)) {
    return RecallError{*error};
  }
  return out;
}

std::variant<CompressedContext, RecallError> build_context(Recaller& recaller,
                                                           const ContextRequest& request,
                                                           const ReadScope& scope,
                                                           std::int64_t now_us) {
  RecallRequest ask = request.recall;
  ask.limit = kContextHits;
  ask.offset = 0;
  auto answer = recaller.recall(ask, scope, now_us);
  if (auto* error = std::get_if<RecallError>(&answer)) return *error;
  const RecallResponse& found = std::get<RecallResponse>(answer);

  CompressedContext out;
  out.indexed_through_seq = found.indexed_through_seq;
  out.lag_events = found.lag_events;
  Builder text(request.max_tokens);
  std::set<std::string> shown;
  auto show = [&](const std::string& id, const std::string& line, double share) {
    if (shown.contains(id) || !text.add(line, share)) return false;
    shown.insert(id);
    out.sources.push_back(id);
    return true;
  };

  // Hot: the best hits, whole, while they fit (a hit too long for what is left is skipped,
  // the next shorter one may still fit).
  std::size_t next = 0;
  for (; next < found.results.size(); ++next) {
    const RecallHit& h = found.results[next];
    if (text.used() >=
        static_cast<std::int64_t>(kHotShare * static_cast<double>(request.max_tokens)) - 8) {
      break;
    }
    if (show(h.id, item_line(h.id, h.ts_us, h.kind, h.agent_id, h.content, h.redacted),
             kHotShare)) {
      ++out.hot_count;
      if (!h.redacted) out.event_seqs.push_back(h.seq);
    }
  }

  // Warm: around the best three, then what is known of the entities the question named.
  EventRows& rows = recaller.rows();
  const EventFilter filter{ask.ns,       ask.kinds,    ask.agent_id,        "",
                           ask.since_us, ask.until_us, ask.include_archived};
  for (std::size_t i = 0; i < std::min(kWarmFrom, found.results.size()); ++i) {
    const RecallHit& h = found.results[i];
    if (h.episode_id.empty() || !h.sequence_number) continue;
    for (const EventRow& n :
         rows.episode_neighbours(h.ns, h.episode_id, *h.sequence_number, filter)) {
      if (show(n.id, item_line(n.id, n.ts_us, n.kind, n.agent_id, n.content, n.redacted),
               kWarmShare)) {
        ++out.warm_count;
        if (!n.redacted) out.event_seqs.push_back(n.seq);
      }
    }
  }
  for (const PrimedEntity& p : found.primed_entities) {
    if (p.speaker) continue;
    if (auto summary = rows.entity_summary(p.entity_id)) {
      const std::string id = "entity:" + p.key;
      if (show(id, "[" + id + "] " + fold_space(*summary), kWarmShare)) ++out.warm_count;
    }
  }

  // Cold: pointers to the hits that were not shown.
  for (const RecallHit& h : found.results) {
    if (shown.contains(h.id)) continue;
    std::string first = h.redacted ? h.content : fold_space(h.content);
    if (first.size() > kPointerBytes) first = cut_content(first, kPointerBytes).first + "...";
    if (show(h.id, "[" + h.id + "] " + text::format_day(h.ts_us) + ": " + first, 1.0)) {
      ++out.cold_count;
    }
  }
  out.context_text = text.text();
  out.total_tokens = text.used();
  return out;
}

json to_json(const CompressedContext& context) {
  return {{"ok", true},
          {"context_text", context.context_text},
          {"total_tokens", context.total_tokens},
          {"hot_count", context.hot_count},
          {"warm_count", context.warm_count},
          {"cold_count", context.cold_count},
          {"sources", context.sources},
          {"indexed_through_seq", context.indexed_through_seq},
          {"lag_events", context.lag_events}};
}

}  // namespace reflectd::recall
