#include "jobs/conversation_decisions.hpp"

#include <cctype>
#include <regex>
#include <string>

#include "text/fact_extraction.hpp"

namespace reflectd::jobs {
namespace {

constexpr double kTurnConfidence = 0.6;
constexpr double kNoRationalePenalty = 0.1;
constexpr std::size_t kMaxBytes = 300;

// The turn's sentences: they end at . ! ? before a space or the end.
std::vector<std::string> sentences(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  for (std::size_t i = 0; i < text.size(); ++i) {
    current.push_back(text[i] == '\n' ? ' ' : text[i]);
    const bool end = text[i] == '.' || text[i] == '!' || text[i] == '?';
    if ((end && (i + 1 == text.size() || text[i + 1] == ' ')) || i + 1 == text.size()) {
      const std::string trimmed = one_line(current);
      if (!trimmed.empty()) out.push_back(trimmed);
      current.clear();
    }
  }
  return out;
}

std::string without_end(std::string s) {
  while (!s.empty() && (s.back() == '.' || s.back() == '!' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::optional<ExtractedDecision> decision_from_turn(std::string_view content,
                                                    std::string_view agent_id, std::int64_t ts_us) {
  const auto [prefix, text] = text::turn_speaker(content);
  const std::string speaker = prefix.empty() ? std::string(agent_id) : prefix;
  if (speaker.empty()) return std::nullopt;
  static const std::regex choice(
      R"(\b(?:(?:i|we)(?:'ve| have)? (?:decided|chose|made the decision) to|(?:i|we)'ll go with|let's (?:go with|use|stick with)|from now on,? (?:i|we)(?:'ll| will)?)\s+\S+\s+\S+)",
      std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
  static const std::regex reason(
      R"(,?\s+\b(because|so that|since|in order to|to make sure)\b\s+.*$)",
      std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
  const std::vector<std::string> said = sentences(text);
  for (std::size_t i = 0; i < said.size(); ++i) {
    const std::string& sentence = said[i];
    if (sentence.ends_with('?')) continue;
    std::smatch m;
    if (!std::regex_search(sentence, m, choice)) continue;
    std::string from = sentence.substr(static_cast<std::size_t>(m.position(0)));
    std::string rationale;
    std::smatch r;
    if (std::regex_search(from, r, reason) && r.position(0) > 0) {
      rationale = without_end(one_line(from.substr(static_cast<std::size_t>(r.position(0)))));
      while (!rationale.empty() && (rationale.front() == ',' || rationale.front() == ' ')) {
        rationale.erase(0, 1);
      }
      from.resize(static_cast<std::size_t>(r.position(0)));
    } else if (i + 1 < said.size() && !said[i + 1].ends_with('?')) {
      rationale = text::third_person(without_end(said[i + 1]), speaker, ts_us);
    }
    // "let's use X" is the speakers' choice: read as "we'll use X".
    if (from.size() > 6 &&
        (from.compare(0, 6, "let's ") == 0 || from.compare(0, 6, "Let's ") == 0)) {
      from = "we'll " + from.substr(6);
    }
    ExtractedDecision d;
    d.statement = text::third_person(without_end(from), speaker, ts_us);
    d.statement[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(d.statement[0])));
    d.statement = clip_words(d.statement + ".", kMaxBytes);
    d.rationale = clip_words(rationale, kMaxBytes);
    d.confidence = kTurnConfidence - (rationale.empty() ? kNoRationalePenalty : 0.0);
    return d;
  }
  return std::nullopt;
}

}  // namespace reflectd::jobs
