#include "jobs/decision_extraction.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

#include "common/ascii.hpp"
#include "common/utf8.hpp"

namespace reflectd::jobs {
namespace {

constexpr std::array<std::string_view, 2> kProblemLabels{"Problem:", "Issue:"};
constexpr std::array<std::string_view, 2> kSolutionLabels{"Solution:", "Fix:"};

}  // namespace

namespace {

// A list item's text: "- X" and "* X" give X ("Solution:\n- Write a constexpr isdigit").
std::string_view unbulleted(std::string_view line) {
  if (line.size() > 2 && (line[0] == '-' || line[0] == '*') && line[1] == ' ') {
    return trim(line.substr(2));
  }
  return line;
}

// "Word:" at the start of a line (a capitalised label of one word), e.g. "Solution:".
bool starts_with_label(std::string_view line) {
  const auto colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 20) return false;
  if (std::isupper(static_cast<unsigned char>(line[0])) == 0) return false;
  return std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(colon),
                     [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
}

}  // namespace

// Cut at a word boundary to at most max_bytes, never inside a UTF-8 sequence.
std::string clip_words(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  // A whole sentence when one ends in the second half.
  if (const auto stop = text.rfind(". ", max_bytes - 1);
      stop != std::string::npos && stop >= max_bytes / 2) {
    text.resize(stop + 1);
    return text;
  }
  std::size_t cut = text.rfind(' ', max_bytes);
  if (cut == std::string::npos || cut < max_bytes / 2) {
    cut = utf8_boundary(text, max_bytes);
  }
  text.resize(cut);
  while (!text.empty() && (text.back() == ' ' || text.back() == ',')) text.pop_back();
  return text + "...";
}

namespace {

std::string capitalised(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text;
}

}  // namespace

// Collapses runs of white space (line breaks included) into single spaces.
std::string one_line(std::string_view text) {
  std::string out;
  bool space = false;
  for (const char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !out.empty();
    } else {
      if (space) out += ' ';
      out += c;
      space = false;
    }
  }
  return out;
}

namespace {

bool refers_back(std::string_view solution) {
  constexpr std::array<std::string_view, 5> kBack{"it", "them", "this", "these", "that"};
  std::vector<std::string> words;
  std::string word;
  for (const char c : solution) {
    if (c != ' ') {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  if (words.size() < 5) return true;
  return std::any_of(words.begin(), words.begin() + 2, [&](const std::string& w) {
    return std::find(kBack.begin(), kBack.end(), w) != kBack.end();
  });
}

}  // namespace

bool is_test_path(std::string_view path) {
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto end = std::min(path.find('/', start), path.size());
    std::string_view part = path.substr(start, end - start);
    if (const auto dot = part.find('.'); dot != std::string_view::npos) part = part.substr(0, dot);
    if (part.starts_with("test") || part.ends_with("_test") || part.ends_with("_tests")) {
      return true;
    }
    start = end + 1;
  }
  return false;
}

namespace {

bool is_edit_tool(std::string_view tool) {
  return tool == "edit" || tool == "create" || tool == "write" || tool == "str_replace" ||
         tool == "insert" || tool == "apply_patch";
}

// A thought about the edit command itself (a retry after a malformed edit), not the change.
bool is_command_repair(std::string_view thought) {
  const std::string t = ascii_lower(thought);
  return t.find("edit command") != std::string::npos ||
         t.find("indentation") != std::string::npos || t.find("syntax") != std::string::npos ||
         t.find("try again") != std::string::npos;
}

// The thought from its first sentence that states what to do ("To fix this issue, we
// should ..."), else the whole thought.
std::string decisive_part(std::string_view thought) {
  constexpr std::array<std::string_view, 8> kMarkers{"to fix", "should", "need to", "instead",
                                                     "let's",  "we can", "i will",  "we will"};
  std::string text = one_line(thought);
  const std::string folded = ascii_lower(text);
  std::size_t sentence = 0;
  while (sentence < text.size()) {
    std::size_t end = text.size();
    for (std::size_t i = sentence; i + 1 < text.size(); ++i) {
      if ((text[i] == '.' || text[i] == '!' || text[i] == '?') &&
          (text[i + 1] == ' ' || std::isupper(static_cast<unsigned char>(text[i + 1])) != 0)) {
        end = i + 1;
        break;
      }
    }
    const std::string_view part = std::string_view(folded).substr(sentence, end - sentence);
    if (std::any_of(kMarkers.begin(), kMarkers.end(),
                    [&](std::string_view m) { return part.find(m) != std::string_view::npos; })) {
      return text.substr(sentence);
    }
    sentence = end;
    while (sentence < text.size() && text[sentence] == ' ') ++sentence;
  }
  return text;
}

bool is_check(const TrajectoryCall& call) {
  return call.tool == "python" || call.tool == "pytest" ||
         call.command.find("test") != std::string::npos ||
         call.command.find("reproduce") != std::string::npos;
}

}  // namespace

std::string labelled_paragraph(std::string_view text, std::span<const std::string_view> labels,
                               std::size_t max_bytes) {
  std::string paragraph;
  bool inside = false;
  for (std::size_t start = 0; start <= text.size();) {
    const auto end = std::min(text.find('\n', start), text.size());
    const std::string_view line = trim(text.substr(start, end - start));
    start = end + 1;
    if (!inside) {
      for (const std::string_view label : labels) {
        if (line.starts_with(label)) {
          inside = true;
          paragraph = std::string(unbulleted(trim(line.substr(label.size()))));
          break;
        }
      }
      if (inside && paragraph.empty()) continue;  // "Solution:" alone, its text below
      if (!inside) continue;
    } else {
      if (line.empty()) {
        if (paragraph.empty()) continue;
        break;
      }
      if (starts_with_label(line)) break;
      if (!paragraph.empty()) paragraph += ' ';
      paragraph += unbulleted(line);
    }
    if (end == text.size()) break;
  }
  return clip_words(one_line(paragraph), max_bytes);
}

std::optional<ExtractedDecision> decision_from_message(std::string_view kind,
                                                       std::string_view content,
                                                       std::span<const std::string> files) {
  std::string problem = labelled_paragraph(content, kProblemLabels);
  std::string solution = labelled_paragraph(content, kSolutionLabels);
  if (problem.empty() || solution.empty()) return std::nullopt;
  ExtractedDecision d;
  // "Solution: fix them" says little alone: a solution of fewer than five words, or whose
  // first two words point back at the problem (it, them, this, these, that), is stated with its
  // problem ("Unused variables warnings: fix them").
  d.statement =
      refers_back(solution) ? capitalised(problem) + ": " + solution : capitalised(solution);
  d.rationale = capitalised(std::move(problem));
  d.verified =
      std::any_of(files.begin(), files.end(), [](const std::string& f) { return is_test_path(f); });
  d.confidence = (kind == "commit_change" ? 0.6 : 0.5) + (d.verified ? 0.2 : 0.0);
  return d;
}

std::optional<ExtractedDecision> decision_from_trajectory(std::string_view task,
                                                          std::span<const TrajectoryCall> calls) {
  // Calls before the (last) submission.
  std::size_t n = calls.size();
  for (std::size_t i = calls.size(); i-- > 0;) {
    if (calls[i].tool == "submit") {
      n = i;
      break;
    }
  }
  if (n == 0) return std::nullopt;
  // The last edit whose thought is about the change, not a repair of the edit command.
  std::optional<std::size_t> chosen;
  for (std::size_t i = n; i-- > 0;) {
    if (is_edit_tool(calls[i].tool) && !trim(calls[i].thought).empty() &&
        !is_command_repair(calls[i].thought)) {
      chosen = i;
      break;
    }
  }
  if (!chosen) {
    for (std::size_t i = n; i-- > 0;) {
      if (!trim(calls[i].thought).empty()) {
        chosen = i;
        break;
      }
    }
  }
  if (!chosen) return std::nullopt;
  std::string problem = task_problem(task);
  if (problem.empty()) return std::nullopt;  // a decision answers a stated problem
  ExtractedDecision d;
  d.statement = capitalised(clip_words(decisive_part(calls[*chosen].thought), 300));
  d.call_index = *chosen;
  d.rationale = capitalised(std::move(problem));
  for (std::size_t i = *chosen + 1; i < n; ++i) {
    if (is_check(calls[i]) && calls[i].succeeded) d.verified = true;
  }
  d.confidence = 0.6 + (d.verified ? 0.2 : 0.0);
  return d;
}

// The problem a task states: the text after "ISSUE:", else the sentence naming the challenge
// ('... problem named "X", worth 10 points.'), else the first line.
std::string task_problem(std::string_view task) {
  if (const auto issue = task.find("ISSUE:"); issue != std::string_view::npos) {
    std::string_view rest = task.substr(issue + 6);
    while (!rest.empty()) {
      const auto end = std::min(rest.find('\n'), rest.size());
      const std::string_view line = trim(rest.substr(0, end));
      if (!line.empty()) return clip_words(std::string(line), 300);
      rest = end < rest.size() ? rest.substr(end + 1) : std::string_view{};
    }
  }
  if (const auto named = task.find(" named "); named != std::string_view::npos) {
    const auto begin = task.rfind(". ", named);
    const std::size_t from = begin == std::string_view::npos ? 0 : begin + 2;
    const auto end = task.find(". ", named);
    return clip_words(
        one_line(task.substr(
            from, end == std::string_view::npos ? std::string_view::npos : end + 1 - from)),
        300);
  }
  const auto end = std::min(task.find('\n'), task.size());
  return clip_words(std::string(trim(task.substr(0, end))), 300);
}

}  // namespace reflectd::jobs
