#include "jobs/commit_decisions.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "common/ascii.hpp"

namespace reflectd::jobs {
namespace {

// The lines of `text`, each trimmed.
std::vector<std::string_view> message_lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0; start <= text.size();) {
    const auto end = std::min(text.find('\n', start), text.size());
    out.push_back(trim(text.substr(start, end - start)));
    start = end + 1;
  }
  return out;
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// The hex digits at the start of `text` when there are 7 to 40 of them, lower case.
std::string commit_id_at(std::string_view text) {
  std::size_t n = 0;
  while (n < text.size() && is_hex(text[n])) ++n;
  if (n < 7 || n > 40) return {};
  return ascii_lower(text.substr(0, n));
}

// ":bug: " and similar gitmoji shortcodes at the start.
std::string_view without_gitmoji(std::string_view text) {
  while (text.size() > 2 && text[0] == ':') {
    const auto close = text.find(':', 1);
    if (close == std::string_view::npos || close > 30) break;
    const std::string_view code = text.substr(1, close - 1);
    if (code.empty() || !std::all_of(code.begin(), code.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' ||
                 c == '+';
        })) {
      break;
    }
    text = trim(text.substr(close + 1));
  }
  return text;
}

// Labels that state a problem or a note rather than the change: a subject that starts with one
// is read by decision_from_message's rules, not as a choice.
constexpr std::array<std::string_view, 7> kNotChangeTypes{"problem", "issue",     "bug", "question",
                                                          "wip",     "relicense", "note"};

// "feat(api)!: " (a conventional-commit type, with its optional scope and breaking mark) or
// "cmake: " (an area label) at the start: its length including the space, or 0. Sets `label`.
std::size_t type_prefix(std::string_view text, std::string& label) {
  std::size_t i = 0;
  while (i < text.size() && i < 25 &&
         (std::isalnum(static_cast<unsigned char>(text[i])) != 0 || text[i] == '_' ||
          text[i] == '-' || text[i] == '.' || text[i] == '/')) {
    ++i;
  }
  if (i == 0 || std::isalpha(static_cast<unsigned char>(text[0])) == 0) return 0;
  label = ascii_lower(text.substr(0, i));
  if (i < text.size() && text[i] == '(') {
    const auto close = text.find(')', i);
    if (close == std::string_view::npos || close > i + 40) return 0;
    i = close + 1;
  }
  if (i < text.size() && text[i] == '!') ++i;
  if (i + 1 >= text.size() || text[i] != ':' || text[i + 1] != ' ') return 0;
  return i + 2;
}

// "#123" tokens of `text`, each once, in order.
std::vector<std::string> references_in(std::string_view text) {
  std::vector<std::string> refs;
  for (std::size_t at = text.find('#'); at != std::string_view::npos; at = text.find('#', at + 1)) {
    std::size_t end = at + 1;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) != 0) ++end;
    if (end == at + 1) continue;
    if (at > 0 && std::isalnum(static_cast<unsigned char>(text[at - 1])) != 0) continue;
    std::string ref(text.substr(at, end - at));
    if (std::find(refs.begin(), refs.end(), ref) == refs.end()) refs.push_back(std::move(ref));
  }
  return refs;
}

// `text` without trailing "(#123)", "(#1, #2)", "#123" groups and a final period.
std::string_view without_trailing_references(std::string_view text) {
  for (;;) {
    text = trim(text);
    if (!text.empty() && text.back() == '.') {
      text.remove_suffix(1);
      continue;
    }
    if (!text.empty() && text.back() == ')') {
      const auto open = text.rfind('(');
      if (open != std::string_view::npos) {
        const std::string_view inside = text.substr(open + 1, text.size() - open - 2);
        const bool only_refs = !inside.empty() && inside.find('#') != std::string_view::npos &&
                               std::all_of(inside.begin(), inside.end(), [](char c) {
                                 return c == '#' || c == ',' || c == ' ' ||
                                        std::isdigit(static_cast<unsigned char>(c)) != 0;
                               });
        if (only_refs) {
          text = text.substr(0, open);
          continue;
        }
      }
    }
    const auto hash = text.rfind(" #");
    if (hash != std::string_view::npos && hash + 2 < text.size() &&
        std::all_of(text.begin() + static_cast<std::ptrdiff_t>(hash) + 2, text.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
      text = text.substr(0, hash);
      continue;
    }
    return text;
  }
}

std::vector<std::string> subject_words(std::string_view lower) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start < lower.size()) {
    const auto end = std::min(lower.find(' ', start), lower.size());
    if (end > start) {
      std::string w(lower.substr(start, end - start));
      while (!w.empty() && (w.back() == ',' || w.back() == ';' || w.back() == ':')) w.pop_back();
      words.push_back(std::move(w));
    }
    start = end + 1;
  }
  return words;
}

bool contains_any(std::string_view text, std::span<const std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view n) { return text.find(n) != std::string_view::npos; });
}

// What a verb needs after it to state a choice.
enum class Needs { kAnything, kTo, kWithOrBy, kSwitch, kAway, kDefault, kByDefault, kMinimum };

struct VerbRule {
  std::string_view verb;  // base form; "-s", "-d", "-ed" and the listed past are accepted too
  std::string_view past;
  Needs needs;
};

constexpr std::array<VerbRule, 27> kVerbRules{{
    {"use", "used", Needs::kAnything},
    {"adopt", "adopted", Needs::kAnything},
    {"prefer", "preferred", Needs::kAnything},
    {"require", "required", Needs::kAnything},
    {"deprecate", "deprecated", Needs::kAnything},
    {"drop", "dropped", Needs::kAnything},
    {"introduce", "introduced", Needs::kAnything},
    {"switch", "switched", Needs::kSwitch},
    {"migrate", "migrated", Needs::kTo},
    {"move", "moved", Needs::kTo},
    {"port", "ported", Needs::kTo},
    {"convert", "converted", Needs::kTo},
    {"rename", "renamed", Needs::kTo},
    {"change", "changed", Needs::kTo},
    {"replace", "replaced", Needs::kWithOrBy},
    {"remove", "removed", Needs::kAway},
    {"stop", "stopped", Needs::kAway},
    {"don't", "didn't", Needs::kAway},
    {"dont", "dont", Needs::kAway},
    {"never", "never", Needs::kAway},
    {"make", "made", Needs::kDefault},
    {"default", "defaulted", Needs::kTo},
    {"enable", "enabled", Needs::kByDefault},
    {"disable", "disabled", Needs::kByDefault},
    {"bump", "bumped", Needs::kMinimum},
    {"raise", "raised", Needs::kMinimum},
    {"increase", "increased", Needs::kMinimum},
}};

const VerbRule* rule_of(const std::string& word) {
  for (const VerbRule& r : kVerbRules) {
    if (word == r.verb || word == r.past || word == std::string(r.verb) + "s" ||
        word == std::string(r.verb) + "d" || word == std::string(r.verb) + "ed" ||
        word == std::string(r.verb) + "es") {
      return &r;
    }
  }
  return nullptr;
}

bool needs_met(Needs needs, std::string_view rest) {
  static constexpr std::array<std::string_view, 2> kTo{" to ", " into "};
  static constexpr std::array<std::string_view, 2> kWith{" with ", " by "};
  static constexpr std::array<std::string_view, 3> kSwitch{" to ", " from ", " into "};
  static constexpr std::array<std::string_view, 7> kAway{
      "support", "using", "use ", "depend", "rely", "relying", "dependency"};
  static constexpr std::array<std::string_view, 4> kDefault{"default", "optional", "mandatory",
                                                            "required"};
  static constexpr std::array<std::string_view, 3> kMinimum{"minimum", "required", "min "};
  const std::string padded = " " + std::string(rest) + " ";
  switch (needs) {
    case Needs::kAnything: return true;
    case Needs::kTo: return contains_any(padded, kTo);
    case Needs::kWithOrBy: return contains_any(padded, kWith);
    case Needs::kSwitch: return contains_any(padded, kSwitch);
    case Needs::kAway: return contains_any(padded, kAway);
    case Needs::kDefault: return contains_any(padded, kDefault);
    case Needs::kByDefault: return padded.find(" by default") != std::string::npos;
    case Needs::kMinimum: return contains_any(padded, kMinimum);
  }
  return false;
}

// Subjects that name routine work, whatever their verb.
constexpr std::array<std::string_view, 28> kRoutine{
    "redundant",   "unused",      "unnecessar",     "obsolete comment",  "naming style",
    "relicens",    "lgpl",        "trailing space", "naming convention", "typo",
    "spelling",    "whitespace",  "formatting",     "clang-format",      "clang format",
    "readme",      "changelog",   "bump version",   "version bump",      "update version",
    "license",     "copyright",   "merge branch",   "merge remote",      "wip",
    "white space", "indentation", "coding style"};

// A line git or a forge appends: "Signed-off-by: ...", "Co-authored-by: ...".
bool is_trailer(std::string_view line) {
  const auto colon = line.find(": ");
  if (colon == std::string_view::npos || colon == 0 || colon > 30) return false;
  return std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '-';
  });
}

// The body's paragraphs after its subject line(s), each on one line, trailers left out.
std::vector<std::string> body_paragraphs(std::string_view content, std::size_t skip_lines) {
  std::vector<std::string> out;
  std::string paragraph;
  const auto lines = message_lines(content);
  for (std::size_t i = skip_lines; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.empty() || is_trailer(line) || line.starts_with("This reverts commit")) {
      if (!paragraph.empty()) out.push_back(one_line(paragraph));
      paragraph.clear();
      continue;
    }
    paragraph += paragraph.empty() ? "" : " ";
    paragraph += line;
  }
  if (!paragraph.empty()) out.push_back(one_line(paragraph));
  return out;
}

// The sentences of a paragraph: ends at ". ", "! ", "? ".
std::vector<std::string_view> paragraph_sentences(std::string_view paragraph) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i + 1 < paragraph.size(); ++i) {
    if ((paragraph[i] == '.' || paragraph[i] == '!' || paragraph[i] == '?') &&
        paragraph[i + 1] == ' ') {
      out.push_back(trim(paragraph.substr(start, i + 1 - start)));
      start = i + 2;
    }
  }
  if (start < paragraph.size()) out.push_back(trim(paragraph.substr(start)));
  return out;
}

constexpr std::array<std::string_view, 10> kReasonMarkers{
    " because ",   "so that ",  "to avoid ",    " since ",       "in order to ",
    "to prevent ", "otherwise", "this allows ", "to make sure ", "to ensure "};

std::string rationale_of(std::string_view content, std::size_t subject_lines,
                         std::string_view subject_text) {
  static constexpr std::array<std::string_view, 1> kProblem{"Problem:"};
  if (std::string problem = labelled_paragraph(content, kProblem); !problem.empty()) {
    return problem;
  }
  const auto paragraphs = body_paragraphs(content, subject_lines);
  for (const auto& paragraph : paragraphs) {
    for (const std::string_view sentence : paragraph_sentences(paragraph)) {
      const std::string lower = " " + ascii_lower(sentence);
      if (contains_any(lower, kReasonMarkers)) return clip_words(std::string(sentence), 300);
    }
  }
  const std::string lower = " " + ascii_lower(subject_text) + " ";
  for (const std::string_view marker : kReasonMarkers) {
    if (const auto at = lower.find(marker); at != std::string::npos && at > 1) {
      return clip_words(std::string(trim(subject_text.substr(at - 1))), 300);
    }
  }
  if (!paragraphs.empty()) return clip_words(paragraphs.front(), 300);
  return {};
}

// The words a plain revert ("Revert X to Y", "Revert to Y") gives of the change it undid. The
// revert brings Y back, so what it undid is X in Y's place ("std::malloc/std::free in place of
// global malloc/free"), or an unnamed replacement of Y ("replacing a simpler shutdown"). A "to"
// after a verb or a gerund ("adding constexpr to rotr", "'clean' change to Makefile") or before a
// purpose ("to satisfy C++11 compilers") belongs to the change itself: the text stays. Only
// the first clause is kept: a revert's subject line goes on to say why.
std::string reverted_change(std::string_view text) {
  for (const std::string_view end : {". ", " - ", "; "}) {
    if (const auto at = text.find(end); at != std::string_view::npos) text = text.substr(0, at);
  }
  if (ascii_lower(text).starts_with("back ")) text.remove_prefix(5);
  const std::string lower = ascii_lower(text);
  if (lower.starts_with("to ")) return "replacing " + std::string(trim(text.substr(3)));
  static constexpr std::array<std::string_view, 18> kPurposes{
      "allow", "avoid", "be",    "ensure",  "fix",    "get",     "handle",  "improve", "keep",
      "let",   "make",  "match", "prevent", "reduce", "satisfy", "support", "work",    "enable"};
  const auto split = [&](std::size_t at, std::size_t width) {
    return std::string(trim(text.substr(0, at))) + " in place of " +
           std::string(trim(text.substr(at + width)));
  };
  if (const auto at = lower.find(" back to "); at != std::string::npos) return split(at, 9);
  const auto at = lower.find(" to ");
  if (at == std::string::npos) return std::string(text);
  const std::string first = lower.substr(0, lower.find(' '));
  const std::string before = lower.substr(0, at);
  const std::string last = before.substr(before.find_last_of(' ') + 1);  // npos + 1 is 0
  const std::string_view after = std::string_view(lower).substr(at + 4);
  const std::string next(after.substr(0, after.find(' ')));
  // "a 'clean' change to Makefile": the word before "to" may be the change's verb or noun.
  const bool verb_before =
      first.ends_with("ing") || rule_of(first) != nullptr || rule_of(last) != nullptr;
  const bool purpose_after = std::find(kPurposes.begin(), kPurposes.end(), next) != kPurposes.end();
  return verb_before || purpose_after ? std::string(text) : split(at, 4);
}

}  // namespace

bool is_routine_change(std::string_view text) { return contains_any(ascii_lower(text), kRoutine); }

CommitSubject read_commit_subject(std::string_view content, bool merge) {
  const auto lines = message_lines(content);
  CommitSubject s;
  if (lines.empty()) return s;
  s.line = std::string(lines[0]);
  const std::string lower_line = ascii_lower(lines[0]);
  if (lower_line.starts_with("merge pull request #")) {
    // "Merge pull request #N from owner/branch": the title is the first line after it.
    if (auto refs = references_in(lines[0]); !refs.empty()) s.refs.push_back(std::move(refs[0]));
    s.line.clear();
    for (std::size_t i = 1; i < lines.size(); ++i) {
      if (!lines[i].empty()) {
        s.line = std::string(lines[i]);
        break;
      }
    }
    if (s.line.empty()) return s;
  } else if (merge || lower_line.starts_with("merge branch") ||
             lower_line.starts_with("merge remote-tracking") ||
             lower_line.starts_with("merge tag")) {
    return s;  // a merge of branches says what was joined, not what changed
  }
  std::string_view text = without_gitmoji(trim(s.line));
  std::string label;
  if (const std::size_t prefix = type_prefix(text, label); prefix > 0) {
    if (std::find(kNotChangeTypes.begin(), kNotChangeTypes.end(), label) != kNotChangeTypes.end()) {
      return s;
    }
    text = trim(text.substr(prefix));
  }
  for (auto& ref : references_in(text)) {
    if (std::find(s.refs.begin(), s.refs.end(), ref) == s.refs.end()) s.refs.push_back(ref);
  }
  s.text = std::string(without_trailing_references(text));
  return s;
}

std::optional<ExtractedDecision> decision_from_commit(std::string_view content, bool merge,
                                                      std::span<const std::string> files) {
  if (read_revert(content)) return std::nullopt;
  const CommitSubject subject = read_commit_subject(content, merge);
  if (subject.text.empty()) return std::nullopt;
  const std::string lower = ascii_lower(subject.text);
  if (is_routine_change(lower)) return std::nullopt;
  std::vector<std::string> words = subject_words(lower);
  if (words.size() < 2) return std::nullopt;
  std::string verb = words[0];
  std::size_t rest_at = lower.find(' ');
  if (verb == "do" && words[1] == "not") {  // "Do not use X" reads as "Don't use X"
    verb = "don't";
    rest_at = lower.find(' ', rest_at + 1);
  }
  const VerbRule* rule = rule_of(verb);
  if (rule == nullptr) return std::nullopt;
  const std::string_view rest =
      rest_at == std::string::npos ? std::string_view{} : std::string_view(lower).substr(rest_at);
  if (rule->verb == "default" && words[1] != "to") return std::nullopt;
  if (!needs_met(rule->needs, rest)) return std::nullopt;

  ExtractedDecision d;
  d.statement = clip_words(subject.text, 300);
  // A merge's title line is its second non-empty line: the body starts after it.
  std::size_t subject_lines = 1;
  if (ascii_lower(trim(content.substr(0, content.find('\n')))).starts_with("merge pull request")) {
    const auto lines = message_lines(content);
    for (std::size_t i = 1; i < lines.size(); ++i) {
      if (!lines[i].empty()) {
        subject_lines = i + 1;
        break;
      }
    }
  }
  d.rationale = rationale_of(content, subject_lines, subject.text);
  const bool reasoned = !d.rationale.empty();
  if (!subject.refs.empty()) {
    std::string refs;
    for (const auto& ref : subject.refs) refs += (refs.empty() ? "" : ", ") + ref;
    d.rationale = clip_words(d.rationale + (reasoned ? " " : "") + "(refs " + refs + ")", 300);
  }
  d.verified =
      std::any_of(files.begin(), files.end(), [](const std::string& f) { return is_test_path(f); });
  // Tenths, exactly: the sum of doubles would print as 0.7000000000000001.
  d.confidence = (6.0 + (d.verified ? 2.0 : 0.0) - (reasoned ? 0.0 : 1.0)) / 10.0;
  return d;
}

std::optional<Revert> read_revert(std::string_view content) {
  const auto lines = message_lines(content);
  if (lines.empty()) return std::nullopt;
  const std::string_view line = lines[0];
  const std::string lower = ascii_lower(line);
  Revert r;
  static constexpr std::array<std::string_view, 4> kQuoted{"revert \"", "back out \"", "backout \"",
                                                           "revert: \""};
  for (const std::string_view prefix : kQuoted) {
    if (lower.starts_with(prefix) && line.size() > prefix.size() + 1) {
      std::string_view inner = line.substr(prefix.size());
      // The quote may be followed by references: Revert "X" (#12).
      const auto close = inner.rfind('"');
      if (close == std::string_view::npos || close == 0) break;
      inner = inner.substr(0, close);
      if (ascii_lower(inner).starts_with("revert \"")) return std::nullopt;  // X is back
      r.subject = std::string(inner);
      break;
    }
  }
  for (const std::string_view body_line : lines) {
    constexpr std::string_view kReverts = "This reverts commit ";
    if (const auto at = body_line.find(kReverts); at != std::string_view::npos) {
      r.commit = commit_id_at(body_line.substr(at + kReverts.size()));
      if (!r.commit.empty()) break;
    }
  }
  static constexpr std::array<std::string_view, 3> kPlain{"revert ", "reverting ", "reverted "};
  if (r.subject.empty()) {
    for (const std::string_view prefix : kPlain) {
      if (!lower.starts_with(prefix)) continue;
      std::string_view rest = trim(line.substr(prefix.size()));
      const std::string rest_lower = ascii_lower(rest);
      if (rest_lower.starts_with("commit ")) {
        const std::string id = commit_id_at(trim(rest.substr(7)));
        if (!id.empty()) {
          if (r.commit.empty()) r.commit = id;
          break;
        }
      }
      rest = without_trailing_references(rest);
      const bool only_reference = rest.empty() || rest.front() == '#';
      if (!only_reference) r.description = reverted_change(rest);
      break;
    }
  }
  if (r.subject.empty() && r.commit.empty() && r.description.empty()) return std::nullopt;
  return r;
}

}  // namespace reflectd::jobs
