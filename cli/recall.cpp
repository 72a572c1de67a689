#include "cli/recall.hpp"

#include <fmt/format.h>

#include "common/utf8.hpp"

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

std::string str(const json& row, const char* key) {
  const auto it = row.find(key);
  if (it == row.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// The index's lag, when results may miss the newest events.
std::string lag_note(const json& reply) {
  const auto lag = reply.value("lag_events", std::int64_t{0});
  if (lag <= 0) return "";
  return fmt::format("(complete through seq {}; {} newer events not indexed yet)\n",
                     reply.value("indexed_through_seq", std::int64_t{0}), lag);
}

}  // namespace

json recall_request(const RecallOptions& o) {
  json r = {{"cmd", "recall"}, {"text", o.text}, {"limit", o.limit}, {"offset", o.offset}};
  if (!o.ns.empty()) r["namespace"] = o.ns;
  if (o.include_archived) r["include_archived"] = true;
  return r;
}

json context_request(const RecallOptions& o) {
  json r = {{"cmd", "context"}, {"text", o.text}, {"max_tokens", o.max_tokens}};
  if (!o.ns.empty()) r["namespace"] = o.ns;
  if (o.include_archived) r["include_archived"] = true;
  return r;
}

std::string format_recall(const json& reply) {
  std::string out;
  const json& results = reply.value("results", json::array());
  if (results.empty()) out += "nothing recalled\n";
  int rank = 0;
  for (const json& hit : results) {
    ++rank;
    const json& why = hit.value("why", json::object());
    std::string reasons;
    for (const json& t : why.value("terms", json::array())) reasons += " " + t.get<std::string>();
    for (const json& e : why.value("entities", json::array())) {
      reasons += " " + e.get<std::string>();
    }
    out += fmt::format("{}. {}  score {:.3f}  {} {}{}\n", rank, str(hit, "id"),
                       hit.value("score", 0.0), str(hit, "date"), str(hit, "kind"),
                       hit.value("agent_id", json()).is_string() ? " " + str(hit, "agent_id") : "");
    if (!reasons.empty()) out += "   why:" + reasons + "\n";
    std::string when;
    for (const json& t : hit.value("times", json::array())) {
      if (!t.value("relative", false)) continue;
      when +=
          fmt::format("{}\"{}\" = {}", when.empty() ? "" : ", ", str(t, "text"), str(t, "date"));
    }
    if (!when.empty()) out += "   when: " + when + "\n";
    std::string content = str(hit, "content");
    // Indent every line of the content under its heading.
    std::string indented = "   ";
    for (const char c : content) {
      indented += c;
      if (c == '\n') indented += "   ";
    }
    out += indented + (hit.value("truncated", false) ? " [truncated]" : "") + "\n";
  }
  const json& derived = reply.value("derived", json::array());
  if (!derived.empty()) out += "derived records:\n";
  for (const json& d : derived) {
    out += fmt::format("  {} {}  score {:.3f}: {}\n", str(d, "kind"), str(d, "id"),
                       d.value("score", 0.0), str(d, "title"));
    std::string text = str(d, "text");
    if (text.size() > 200) {
      text = std::string(utf8_prefix(text, 200)) + "...";
    }
    for (char& c : text) {
      if (c == '\n') c = ' ';
    }
    if (!text.empty()) out += "    " + text + "\n";
  }
  return out + lag_note(reply);
}

std::string format_context(const json& reply) {
  return str(reply, "context_text") +
         fmt::format("({} tokens: {} hot, {} warm, {} cold)\n",
                     reply.value("total_tokens", std::int64_t{0}),
                     reply.value("hot_count", std::int64_t{0}),
                     reply.value("warm_count", std::int64_t{0}),
                     reply.value("cold_count", std::int64_t{0})) +
         lag_note(reply);
}

std::string format_events(const json& reply) {
  std::string out;
  for (const json& e : reply.value("events", json::array())) {
    out += fmt::format(
        "{}  seq {}  {}  {}  {}{}{}\n", str(e, "id"), str(e, "seq"), str(e, "ts"),
        str(e, "namespace"), str(e, "kind"),
        e.value("agent_id", json()).is_string() ? "  " + str(e, "agent_id") : "",
        e.value("sequence_number", json()).is_number() ? "  #" + str(e, "sequence_number") : "");
    out += fmt::format("  status {}  sensitivity {}  salience now {:.3f}  accessed {}\n",
                       str(e, "status"), str(e, "sensitivity"), e.value("salience_now", 0.0),
                       str(e, "access_count"));
    out += str(e, "content") + "\n";
    for (const char* key : {"context", "tags", "entities", "relations", "metadata"}) {
      const auto it = e.find(key);
      if (it != e.end() && !it->is_null()) out += fmt::format("  {}: {}\n", key, it->dump());
    }
    out += "\n";
  }
  for (const json& id : reply.value("missing", json::array())) {
    out += "not found (or not yours to read): " + id.get<std::string>() + "\n";
  }
  return out.empty() ? "no events\n" : out;
}

int run_recall(const RecallOptions& o) {
  return run_control_command({"recall", format_recall, {}}, o.control, recall_request(o));
}

int run_context(const RecallOptions& o) {
  return run_control_command({"context", format_context, {}}, o.control, context_request(o));
}

int run_get(const GetOptions& o) {
  return run_control_command({"get", format_events, {}}, o.control,
                             {{"cmd", "get"}, {"ids", o.ids}});
}

int run_episode(const EpisodeOptions& o) {
  json r = {{"cmd", "episode"}, {"episode_id", o.episode_id}, {"limit", o.limit}};
  if (!o.ns.empty()) r["namespace"] = o.ns;
  return run_control_command({"episode", format_events, {}}, o.control, r);
}

}  // namespace reflectd::cli
