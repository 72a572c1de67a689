#include "text/entity_extraction.hpp"

#include "common/ascii.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <set>
#include <unordered_set>

namespace reflectd::text {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 16> kKnownTypes{
    "agent", "component", "concept", "file", "issue",   "module", "org",  "person",
    "place", "product",   "project", "repo", "service", "tool",   "user", "name"};

bool known_type(std::string_view type) {
  return std::find(kKnownTypes.begin(), kKnownTypes.end(), type) != kKnownTypes.end();
}

bool is_ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_alpha(char c) { return is_upper(c) || is_lower(c); }

// Trailing punctuation that never ends a name.
std::string_view trim_punctuation(std::string_view text) {
  text = trim(text);
  while (!text.empty() &&
         std::string_view(".,;:!?)]}>'\"`*").find(text.back()) != std::string_view::npos) {
    text.remove_suffix(1);
  }
  while (!text.empty() &&
         std::string_view("([{<'\"`*").find(text.front()) != std::string_view::npos) {
    text.remove_prefix(1);
  }
  return trim(text);
}

constexpr std::array<std::string_view, 77> kExtensions{
    "c",     "cc",       "cpp",     "cxx",   "h",    "hh",   "hpp",       "hxx",   "ipp",
    "inl",   "py",       "pyi",     "pl",    "pm",   "rb",   "go",        "rs",    "java",
    "kt",    "js",       "ts",      "jsx",   "tsx",  "cs",   "m",         "mm",    "swift",
    "sh",    "bash",     "zsh",     "ps1",   "bat",  "cmd",  "cmake",     "am",    "ac",
    "in",    "mk",       "txt",     "md",    "rst",  "adoc", "html",      "htm",   "css",
    "xml",   "json",     "yml",     "yaml",  "toml", "ini",  "cfg",       "conf",  "sql",
    "proto", "asciidoc", "vcxproj", "sln",   "def",  "rc",   "supp",      "patch", "diff",
    "enc",   "pub",      "pem",     "csv",   "tsv",  "log",  "gitignore", "pc",    "spec",
    "props", "filters",  "vcproj",  "plist", "ipynb"};

constexpr std::array<std::string_view, 14> kBareFiles{
    "Makefile",     "README",      "AUTHORS",     "NEWS",    "ChangeLog",
    "COPYING",      "LICENSE",     "Dockerfile",  "INSTALL", "MAINTAINERS",
    "CONTRIBUTING", "Jenkinsfile", "Vagrantfile", "Doxyfile"};

// Words trimmed from both ends of a capitalised run (sentence-initial English function words,
// commit-message verbs and labels).
const std::unordered_set<std::string_view>& entity_stop_words() {
  static const std::unordered_set<std::string_view> words{
      "A", "An", "The", "This", "That", "These", "Those", "It", "Its", "We", "I", "You", "He",
      "She", "They", "Our", "My", "Your", "Their", "If", "When", "While", "For", "In", "On", "At",
      "To", "From", "With", "Without", "And", "But", "Or", "So", "Also", "As", "By", "Of", "Now",
      "Then", "There", "Here", "Use", "Used", "Uses", "Using", "Add", "Added", "Adds", "Adding",
      "Fix", "Fixed", "Fixes", "Fixing", "Remove", "Removed", "Removes", "Removing", "Update",
      "Updated", "Updates", "Updating", "Change", "Changed", "Changes", "Make", "Made", "Makes",
      "Merge", "Merged", "Revert", "Reverted", "Reverts", "Move", "Moved", "Moves", "Rename",
      "Renamed", "Problem", "Solution", "Note", "Notes", "See", "Signed", "Initial", "Some", "All",
      "Any", "No", "Not", "Do", "Does", "Did", "Is", "Are", "Was", "Were", "Be", "Been", "Has",
      "Have", "Had", "Should", "Would", "Could", "Can", "Will", "May", "Might", "Must", "Let",
      "Allow", "Allows", "New", "Old", "Support", "Supports", "Implement", "Implemented", "Improve",
      "Improved", "Improves", "Clean", "Cleanup", "Cleaned", "Refactor", "Refactored", "Test",
      "Tests", "Testing", "Set", "Sets", "Get", "Gets", "Check", "Checks", "Only", "Just", "Please",
      "Thanks", "Thank", "Yes", "Otherwise", "However", "Since", "After", "Before", "Because",
      "Each", "Every", "Other", "More", "Most", "Less", "First", "Second", "Last", "Next",
      "Previous", "One", "Two", "Three", "Both", "What", "Which", "Who", "Why", "How", "Where",
      "Instead", "Previously", "Currently", "Even", "Still", "Maybe", "Perhaps", "Thus", "Hence",
      "Therefore", "Finally", "Again", "Let's", "Don't", "Doesn't", "Can't", "Won't", "Isn't",
      "Merge", "Pull", "Request", "Enable", "Enabled", "Disable", "Disabled", "Avoid", "Ensure",
      "Return", "Returns", "Call", "Calls", "Create", "Created", "Creates", "Run", "Runs", "Open",
      "Close", "Closed", "Edit", "Edited", "Write", "Read", "File", "Files", "Line", "Lines",
      "Current", "Directory", "Error", "Errors", "Warning", "Traceback", "Reason", "Result",
      "Results", "Example", "Examples", "Step", "Steps", "Thought", "Observation", "Action",
      "Output", "Input", "Answer", "Question", "Task", "Description", "Summary", "Subject", "Issue",
      "Issues", "Bug", "Bugs", "Version", "Release", "Build", "Builds", "Built", "Documentation",
      "Docs", "Doc", "Comment", "Comments", "Minor", "Major", "Small", "Simple", "Better",
      "Correct", "Corrected", "Proper", "Properly", "Missing", "Wrong", "Unused", "Default",
      "Sometimes", "Always", "Never", "Often", "Well", "Very", "Many", "Much", "Such", "Same",
      "Another", "Via", "Per", "Into", "Over", "Under", "About", "Between", "Against", "Within",
      "True", "False", "None", "Null", "TODO", "FIXME", "Okay", "OK", "Ok", "Hi", "Hello", "Great",
      "Good", "Sure", "Yeah", "Let", "Try", "Tried", "Trying", "Looks", "Look", "Seems", "Found",
      "Find", "Finds", "Show", "Shows", "Showing", "Given", "Need", "Needs", "Needed", "Want",
      "Wants", "Like", "Likes", "Start", "Started", "Stop", "Stopped", "Keep", "Kept", "Replace",
      "Replaced", "Replaces", "Rework", "Reworked", "Simplify", "Simplified", "Introduce",
      "Introduced", "Introduces", "Delete", "Deleted", "Deletes", "Prevent", "Prevents", "Handle",
      "Handles", "Handled", "Define", "Defined", "Defines", "Document", "Documented", "Mention",
      "Mentions", "Describe", "Explain", "Although", "Though", "Unless", "Until", "Whether", "Once",
      "Whenever", "Anyway", "Besides", "I've", "I'm", "I'd", "I'll", "We've", "We're", "It's",
      "That's", "There's", "Let's",
      // Greetings and interjections that open conversation turns ("Hey Caroline!").
      "Hey", "Thanks", "Thank", "Wow", "Oh", "Congrats", "Congratulations", "Bye", "Yes", "Yep",
      "Awesome", "Aww", "Sorry", "Dear", "Haha"};
  return words;
}

bool is_stop_word(std::string_view word) { return entity_stop_words().contains(word); }

// A capitalised word: an upper-case ASCII letter, then letters/digits with at least one
// lower-case letter ("ZeroMQ", "Windows"; not "ZMQ" or "I").
bool capitalised_word(std::string_view word) {
  if (word.size() < 2 || word.size() > 24 || !is_upper(word.front())) return false;
  bool lower = false;
  for (char c : word) {
    if (!is_ascii_alnum(c) && c != '\'' && c != '-') return false;
    lower = lower || is_lower(c);
  }
  return lower;
}

// Labels that read like a speaker prefix but are not people.
bool label_word(std::string_view word) {
  static const std::unordered_set<std::string_view> labels{
      "Problem",      "Solution",      "Note",           "Notes",       "Fix",
      "Fixes",        "Merge",         "Revert",         "Warning",     "Error",
      "Traceback",    "Reason",        "Result",         "Cause",       "See",
      "Closes",       "Ref",           "Refs",           "Todo",        "TODO",
      "Update",       "Subject",       "Description",    "Changes",     "Summary",
      "Example",      "Usage",         "Step",           "Thought",     "Observation",
      "Action",       "Output",        "Input",          "Answer",      "Question",
      "Hint",         "Task",          "Files",          "File",        "Instructions",
      "Important",    "Remember",      "Response",       "Discussion",  "Command",
      "Commands",     "Signed-off-by", "Co-authored-by", "Reviewed-by", "Acked-by",
      "Reported-by",  "Tested-by",     "Also",           "Context",     "Status",
      "Details",      "Background",    "Tips",           "NOTE",        "IMPORTANT",
      "INSTRUCTIONS", "Http",          "Https"};
  return labels.contains(word);
}

class Collector {
 public:
  void add(Source source, std::string_view raw_key, std::string_view display, bool primary) {
    auto key = canonical_key(raw_key);
    if (!key) return;
    if (index_.contains(*key)) return;
    index_.insert(*key);
    Mention m;
    m.key = *key;
    m.type = key->substr(0, key->find(':'));
    m.display = std::string(trim(display));
    m.source = source;
    m.primary = primary;
    // The same person written as a bare capitalised name elsewhere ("Hey Caroline!") is this
    // person, not a second entity.
    if (m.type == "person") {
      if (auto name = canonical_key("name:" + key->substr(7)); name) aliases_.insert({*name, *key});
    }
    out_.mentions.push_back(std::move(m));
  }
  // A file path: file:<path> and module:<first directory>.
  void add_path(Source source, std::string_view raw, const std::string& cwd, bool primary) {
    std::string path = normalize_path(raw);
    if (path.empty()) return;
    std::string absolute;
    if (!cwd.empty() && path.size() > cwd.size() + 1 && path.starts_with(cwd) &&
        path[cwd.size()] == '/') {
      absolute = path;
      path = path.substr(cwd.size() + 1);
    }
    add(source, "file:" + path, raw, primary);
    if (!absolute.empty()) {
      if (auto alias = canonical_key("file:" + absolute); alias) {
        if (auto canonical = canonical_key("file:" + path); canonical && *alias != *canonical) {
          aliases_.insert({*alias, *canonical});
        }
      }
    }
    const std::string module = first_directory(path);
    if (!module.empty()) add(source, "module:" + module, module, primary);
  }
  Extraction& out() { return out_; }
  std::set<std::pair<std::string, std::string>>& aliases() { return aliases_; }
  bool has(const std::string& key) const { return index_.contains(key); }

 private:
  Extraction out_;
  std::unordered_set<std::string> index_;
  std::set<std::pair<std::string, std::string>> aliases_;
};

std::string string_field(const json* object, const char* key) {
  if (object == nullptr || !object->is_object()) return {};
  const auto it = object->find(key);
  return it != object->end() && it->is_string() ? it->get<std::string>() : std::string{};
}

}  // namespace

// "(Current directory: /repo)" in SWE-agent observations.
std::string working_directory(std::string_view content) {
  constexpr std::string_view kMarker = "(Current directory: ";
  const auto at = content.rfind(kMarker);
  if (at == std::string_view::npos) return {};
  const auto start = at + kMarker.size();
  const auto end = content.find(')', start);
  if (end == std::string_view::npos) return {};
  std::string dir = normalize_path(content.substr(start, end - start));
  if (dir.size() < 2 || dir.front() != '/') return {};
  return dir;
}

namespace {

bool path_char(char c) {
  return is_ascii_alnum(c) || std::string_view("_./+-~").find(c) != std::string_view::npos;
}

// Candidate path tokens: maximal runs of path characters.
template <typename F>
void for_each_path_token(std::string_view text, F&& f) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (!path_char(text[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && path_char(text[j])) ++j;
    std::string_view token = text.substr(i, j - i);
    // Part of a URL or an e-mail address: skip the whole token.
    const bool url =
        j + 2 < text.size() && text[j] == ':' && text[j + 1] == '/' && text[j + 2] == '/';
    const bool after_scheme = i >= 3 && text.substr(i - 3, 3) == "://";
    const bool email = (i > 0 && text[i - 1] == '@') || (j < text.size() && text[j] == '@');
    if (!url && !after_scheme && !email) f(token);
    i = j;
  }
}

// Splits into lines.
template <typename F>
void for_each_line(std::string_view text, F&& f) {
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    f(text.substr(start, end - start));
    if (end == text.size()) break;
    start = end + 1;
  }
}

std::string labelled_line(std::string_view text, std::string_view label) {
  std::string found;
  for_each_line(text, [&](std::string_view line) {
    line = trim(line);
    if (found.empty() && line.starts_with(label))
      found = std::string(trim(line.substr(label.size())));
  });
  return found;
}

void typed_tokens(std::string_view text, Collector& c) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_alpha(text[i]) || (i > 0 && (is_ascii_alnum(text[i - 1]) || text[i - 1] == '_')))
      continue;
    std::size_t j = i;
    while (j < text.size() && (is_alpha(text[j]) || text[j] == '_')) ++j;
    if (j >= text.size() || text[j] != ':' || j - i > 16) {
      i = j;
      continue;
    }
    const std::string type = ascii_lower(text.substr(i, j - i));
    std::size_t k = j + 1;
    while (k < text.size() && (is_ascii_alnum(text[k]) ||
                               std::string_view("_./@-").find(text[k]) != std::string_view::npos))
      ++k;
    if (known_type(type) && type != "name" && k > j + 1 &&
        (is_ascii_alnum(text[j + 1]) || text[j + 1] == '_' || text[j + 1] == '/' ||
         text[j + 1] == '.')) {
      const std::string_view raw = text.substr(i, k - i);
      const std::string_view name = trim_punctuation(raw.substr(type.size() + 1));
      if (!name.empty()) {
        if (type == "file") {
          if (looks_like_file_path(name)) c.add_path(Source::kTypedToken, name, {}, false);
        } else {
          c.add(Source::kTypedToken, type + ":" + std::string(name), name, false);
        }
      }
    }
    i = k;
  }
}

void mentions(std::string_view text, Collector& c) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '@') continue;
    // Not inside an e-mail address or a URL ("ipc://@abstract").
    if (i > 0 && (is_ascii_alnum(text[i - 1]) ||
                  std::string_view("_.-+/:").find(text[i - 1]) != std::string_view::npos))
      continue;
    std::size_t j = i + 1;
    while (j < text.size() && (is_ascii_alnum(text[j]) ||
                               std::string_view("_.-").find(text[j]) != std::string_view::npos))
      ++j;
    std::string_view name = trim_punctuation(text.substr(i + 1, j - i - 1));
    while (!name.empty() && (name.back() == '.' || name.back() == '-')) name.remove_suffix(1);
    // "@param"-style doc tags and decorators are not people: require a letter first and no
    // lower-case-only Doxygen/Python keywords.
    static const std::unordered_set<std::string_view> kTags{
        "param",     "return",     "returns",     "brief",          "see",
        "note",      "throws",     "property",    "staticmethod",   "classmethod",
        "dataclass", "pytest",     "ref",         "file",           "author",
        "since",     "deprecated", "todo",        "example",        "code",
        "endcode",   "retval",     "tparam",      "defgroup",       "ingroup",
        "internal",  "rpath",      "loader_path", "executable_path"};
    if (!name.empty() && is_alpha(name.front()) && !kTags.contains(name) && name.size() <= 39 &&
        !looks_like_file_path(name)) {
      c.add(Source::kMention, "person:" + std::string(name), text.substr(i, j - i), false);
    }
    i = j;
  }
}

constexpr std::array<std::string_view, 6> kTrailers{
    "Signed-off-by:", "Co-authored-by:", "Reviewed-by:", "Acked-by:", "Reported-by:", "Tested-by:"};

void speakers(const EventView& event, Collector& c) {
  const std::string_view content = event.content;
  const std::string_view first =
      trim(content.substr(0, std::min(content.find('\n'), content.size())));
  const auto colon = first.find(':');
  if (colon != std::string_view::npos && colon > 0 && colon + 1 < first.size() &&
      first[colon + 1] == ' ') {
    const std::string_view head = first.substr(0, colon);
    if (event.kind == "commit_change") {
      // "area: summary" or "type(scope): summary".
      std::string_view area = head;
      const auto open = head.find('(');
      if (open != std::string_view::npos && head.back() == ')')
        area = head.substr(open + 1, head.size() - open - 2);
      const bool simple =
          !area.empty() && area.size() <= 32 && std::all_of(area.begin(), area.end(), [](char ch) {
            return is_ascii_alnum(ch) ||
                   std::string_view("_-./").find(ch) != std::string_view::npos;
          });
      std::string_view label = head.substr(0, head.find('('));
      auto capitalised = [](std::string_view word) {
        std::string w(word);
        if (!w.empty() && is_lower(w.front())) w.front() = static_cast<char>(w.front() - 'a' + 'A');
        return w;
      };
      // A tracker key ("ZMQII-10: ...") names an issue; a file name a file.
      const auto dash = area.rfind('-');
      const bool issue =
          dash != std::string_view::npos && dash > 0 && dash + 1 < area.size() &&
          std::all_of(area.begin() + static_cast<std::ptrdiff_t>(dash) + 1, area.end(),
                      [](char ch) { return ch >= '0' && ch <= '9'; }) &&
          std::all_of(area.begin(), area.begin() + static_cast<std::ptrdiff_t>(dash), is_alpha);
      if (simple && !label_word(capitalised(label)) && !label_word(capitalised(area)) &&
          is_alpha(area.front())) {
        if (issue) {
          c.add(Source::kSpeaker, "issue:" + std::string(area), area, false);
        } else if (looks_like_file_path(area)) {
          c.add_path(Source::kSpeaker, area, {}, false);
        } else {
          c.add(Source::kSpeaker, "component:" + std::string(area), area, false);
        }
      }
    } else {
      // "Name:" or "First Last:".
      bool ok = !head.empty() && head.size() <= 40;
      int words = 0;
      std::size_t start = 0;
      while (ok && start < head.size()) {
        const auto end = std::min(head.find(' ', start), head.size());
        const std::string_view word = head.substr(start, end - start);
        ok = capitalised_word(word) && !label_word(word) && !is_stop_word(word);
        ++words;
        start = end + 1;
      }
      if (ok && words <= 3) {
        c.add(Source::kSpeaker, "person:" + std::string(head), head, false);
        // The speaker is the agent that published the turn: one party, one entity.
        const auto person = canonical_key("person:" + std::string(head));
        const auto agent = canonical_key("agent:" + std::string(event.agent_id));
        if (person && agent && agent->substr(6) == person->substr(7))
          c.aliases().insert({*agent, *person});
      }
    }
  }
  for_each_line(content, [&](std::string_view line) {
    line = trim(line);
    for (const auto trailer : kTrailers) {
      if (!line.starts_with(trailer)) continue;
      std::string_view name = trim(line.substr(trailer.size()));
      name = trim(name.substr(0, std::min(name.find('<'), name.size())));
      if (!name.empty() && name.size() <= 64 && name.find('@') == std::string_view::npos) {
        c.add(Source::kSpeaker, "person:" + std::string(name), name, false);
      }
    }
  });
}

// Day and month names are capitalised but name a time, not a person or a thing ("on Friday",
// "in May"); the facts job reads them as dates.
bool calendar_name(std::string_view run) {
  static const std::unordered_set<std::string_view> names{
      "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "Mondays",
      "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays", "January",
      "February", "March", "April", "May", "June", "July", "August", "September", "October",
      "November", "December",
      // Abbreviations that name nothing else ("Mon", "Sun" and "Jan" do).
      "Tue", "Tues", "Wed", "Thu", "Thur", "Thurs", "Fri", "Sat", "Feb", "Apr", "Jun", "Jul", "Aug",
      "Sep", "Sept", "Oct", "Nov", "Dec"};
  return names.contains(run);
}

void capitalised_runs(std::string_view text, Collector& c) {
  // Words with their "sentence start" flag.
  struct Word {
    std::string_view text;
    bool sentence_start;
    bool joins_previous;  // separated from the previous word by a single space only
  };
  std::vector<Word> words;
  bool sentence_start = true;
  std::size_t i = 0;
  std::size_t last_end = std::string_view::npos;
  while (i < text.size()) {
    const char ch = text[i];
    if (ch == '.' || ch == '!' || ch == '?' || ch == '\n' || ch == ':' || ch == ';') {
      if (ch != '.' || i + 1 >= text.size() || text[i + 1] == ' ' || text[i + 1] == '\n')
        sentence_start = true;
      last_end = std::string_view::npos;
      ++i;
      continue;
    }
    if (!is_ascii_alnum(ch)) {
      if (ch != ' ') last_end = std::string_view::npos;
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && (is_ascii_alnum(text[j]) || text[j] == '\'' || text[j] == '-' ||
                               text[j] == '_' || static_cast<unsigned char>(text[j]) >= 0x80)) {
      ++j;
    }
    const bool joins = last_end != std::string_view::npos && i == last_end + 1;
    words.push_back({text.substr(i, j - i), sentence_start, joins});
    sentence_start = false;
    last_end = j;
    i = j;
  }
  std::size_t k = 0;
  while (k < words.size()) {
    if (!capitalised_word(words[k].text)) {
      ++k;
      continue;
    }
    std::size_t end = k + 1;
    while (end < words.size() && words[end].joins_previous && capitalised_word(words[end].text) &&
           end - k < 4)
      ++end;
    std::size_t a = k;
    std::size_t b = end;
    while (a < b && is_stop_word(words[a].text)) ++a;
    while (b > a && is_stop_word(words[b - 1].text)) --b;
    if (a < b) {
      const bool lone_initial = b - a == 1 && words[a].sentence_start;
      // A lone sentence-initial word is only a name when it is not an English word we know;
      // we cannot tell, so require an inner capital ("ZeroMQ") for those.
      bool inner_capital = false;
      for (std::size_t p = 1; p < words[a].text.size(); ++p)
        inner_capital = inner_capital || is_upper(words[a].text[p]);
      if (!lone_initial || inner_capital) {
        std::string_view run(
            words[a].text.data(),
            static_cast<std::size_t>(words[b - 1].text.data() + words[b - 1].text.size() -
                                     words[a].text.data()));
        if (run.ends_with("'s")) run.remove_suffix(2);  // possessive: "Martin Lucina's"
        // Already known as a person (speaker, trailer, @mention): not a second entity.
        const auto person = canonical_key("person:" + std::string(run));
        if ((!person || !c.has(*person)) && !calendar_name(run))
          c.add(Source::kCapitalised, "name:" + std::string(run), run, false);
      }
    }
    k = end;
  }
}

// Keys named in one line (paths, typed tokens, mentions, capitalised runs), canonical.
std::vector<std::string> keys_in_line(std::string_view line) {
  Collector c;
  for_each_path_token(line, [&](std::string_view token) {
    if (looks_like_file_path(token)) c.add_path(Source::kContentPath, token, {}, false);
  });
  typed_tokens(line, c);
  mentions(line, c);
  capitalised_runs(line, c);
  std::vector<std::string> keys;
  for (const auto& m : c.out().mentions) {
    if (m.type != "module") keys.push_back(m.key);
  }
  return keys;
}

}  // namespace

const char* to_string(Source source) {
  switch (source) {
    case Source::kExplicit: return "explicit";
    case Source::kTarget: return "target";
    case Source::kAgent: return "agent";
    case Source::kFiles: return "files";
    case Source::kContentPath: return "content_path";
    case Source::kTypedToken: return "typed_token";
    case Source::kMention: return "mention";
    case Source::kSpeaker: return "speaker";
    case Source::kCapitalised: return "capitalised";
  }
  return "explicit";
}

std::string unicode_normalize(std::string_view text, bool fold) {
  // Printable-range ASCII (no NUL) is its own NFC form and case-folds to its ASCII lower case,
  // which is what utf8proc_map returns for it; most keys are ASCII paths and words.
  if (std::all_of(text.begin(), text.end(), [](char c) { return c > 0; })) {
    std::string result(text);
    if (fold) {
      for (char& c : result) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      }
    }
    return result;
  }
  utf8proc_uint8_t* out = nullptr;
  int options = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
  if (fold) options |= UTF8PROC_CASEFOLD;
  // Replace invalid bytes first: utf8proc_map refuses invalid UTF-8.
  std::string valid;
  valid.reserve(text.size());
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  utf8proc_ssize_t pos = 0;
  const auto size = static_cast<utf8proc_ssize_t>(text.size());
  while (pos < size) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(bytes + pos, size - pos, &cp);
    if (n <= 0 || cp < 0) {
      valid += "\xEF\xBF\xBD";
      ++pos;
    } else {
      valid.append(text.substr(static_cast<std::size_t>(pos), static_cast<std::size_t>(n)));
      pos += n;
    }
  }
  const utf8proc_ssize_t length = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t*>(valid.data()),
      static_cast<utf8proc_ssize_t>(valid.size()), &out, static_cast<utf8proc_option_t>(options));
  if (length < 0 || out == nullptr) return valid;
  std::string result(reinterpret_cast<const char*>(out), static_cast<std::size_t>(length));
  std::free(out);
  return result;
}

std::optional<std::string> canonical_key(std::string_view key) {
  const auto colon = key.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 32) return std::nullopt;
  const std::string type = ascii_lower(trim(key.substr(0, colon)));
  if (type.empty() || !std::all_of(type.begin(), type.end(), [](char c) {
        return is_ascii_alnum(c) || c == '_' || c == '-';
      })) {
    return std::nullopt;
  }
  std::string name;
  if (type == "file" || type == "module") {
    name = unicode_normalize(normalize_path(key.substr(colon + 1)), false);
  } else {
    std::string_view raw = trim_punctuation(key.substr(colon + 1));
    // Collapse inner white space.
    std::string collapsed;
    bool space = false;
    for (char c : raw) {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        space = true;
        continue;
      }
      if (space && !collapsed.empty()) collapsed += ' ';
      space = false;
      collapsed += c;
    }
    name = unicode_normalize(collapsed, true);
  }
  if (name.empty() || name.size() > 512) return std::nullopt;
  return type + ":" + name;
}

std::string normalize_path(std::string_view path) {
  path = trim_punctuation(path);
  // ":<line>" or ":<line>:<col>" suffix.
  while (true) {
    const auto colon = path.rfind(':');
    if (colon == std::string_view::npos || colon + 1 >= path.size()) break;
    const auto tail = path.substr(colon + 1);
    if (!std::all_of(tail.begin(), tail.end(), [](char c) { return c >= '0' && c <= '9'; })) break;
    path = path.substr(0, colon);
  }
  const bool absolute = !path.empty() && path.front() == '/';
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto end = std::min(path.find('/', start), path.size());
    const auto part = path.substr(start, end - start);
    if (part.empty() || part == ".") {
      // dropped
    } else if (part == ".." && !parts.empty() && parts.back() != "..") {
      parts.pop_back();
    } else {
      parts.push_back(part);
    }
    if (end == path.size()) break;
    start = end + 1;
  }
  std::string out = absolute ? "/" : "";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    out += parts[i];
  }
  return out == "/" ? std::string{} : out;
}

bool looks_like_file_path(std::string_view token) {
  token = trim_punctuation(token);
  if (token.empty() || token.find("://") != std::string_view::npos || token.find("..") == 0) {
    if (token.find("://") != std::string_view::npos || token.empty()) return false;
  }
  if (token.find('*') != std::string_view::npos || token.find("...") != std::string_view::npos)
    return false;
  // Strip a ":<line>" suffix.
  const std::string normalized = normalize_path(token);
  if (normalized.empty()) return false;
  const std::string_view base =
      std::string_view(normalized)
          .substr(normalized.rfind('/') == std::string::npos ? 0 : normalized.rfind('/') + 1);
  if (base.empty()) return false;
  if (std::find(kBareFiles.begin(), kBareFiles.end(), base) != kBareFiles.end()) return true;
  const auto dot = base.rfind('.');
  if (dot == std::string_view::npos || dot + 1 >= base.size()) return false;
  const std::string_view stem = base.substr(0, dot);
  const std::string_view ext = base.substr(dot + 1);
  if (std::find(kExtensions.begin(), kExtensions.end(), ext) == kExtensions.end()) return false;
  // ".gitignore" style files have an empty stem.
  if (stem.empty()) return ext == "gitignore";
  return std::any_of(stem.begin(), stem.end(), [](char c) { return is_alpha(c); });
}

std::string first_directory(std::string_view path) {
  if (path.starts_with("/")) path.remove_prefix(1);
  const auto slash = path.find('/');
  if (slash == std::string_view::npos || slash == 0) return {};
  return std::string(path.substr(0, slash));
}

Extraction extract_entities(const EventView& event) {
  Collector c;
  std::string cwd = working_directory(event.content);
  if (cwd.empty()) cwd = std::string(event.working_directory);
  // 1. Explicit entities.
  if (event.entities != nullptr && event.entities->is_array()) {
    for (const auto& e : *event.entities) {
      if (!e.is_string()) continue;
      const auto& raw = e.get_ref<const std::string&>();
      if (raw.starts_with("file:")) {
        c.add_path(Source::kExplicit, std::string_view(raw).substr(5), cwd, true);
      } else {
        const auto colon = raw.find(':');
        c.add(Source::kExplicit, raw, colon == std::string::npos ? raw : raw.substr(colon + 1),
              true);
      }
    }
  }
  // 2. context.target.
  if (const std::string target = string_field(event.context, "target"); !target.empty()) {
    const auto colon = target.find(':');
    if (colon != std::string::npos && known_type(ascii_lower(target.substr(0, colon)))) {
      c.add(Source::kTarget, target, target.substr(colon + 1), true);
    } else {
      c.add(Source::kTarget, "component:" + target, target, true);
    }
  }
  // 3. Agent and tool.
  if (!event.agent_id.empty())
    c.add(Source::kAgent, "agent:" + std::string(event.agent_id), event.agent_id, false);
  if (const std::string tool = string_field(event.context, "tool"); !tool.empty()) {
    c.add(Source::kAgent, "tool:" + tool, tool, false);
  }
  // 4. context.files.
  if (event.context != nullptr && event.context->is_object()) {
    if (const auto files = event.context->find("files");
        files != event.context->end() && files->is_array()) {
      for (const auto& f : *files) {
        if (f.is_string()) c.add_path(Source::kFiles, f.get_ref<const std::string&>(), cwd, true);
      }
    }
  }
  // 5.-9. Content rules.
  for_each_path_token(event.content, [&](std::string_view token) {
    if (looks_like_file_path(token)) c.add_path(Source::kContentPath, token, cwd, false);
  });
  typed_tokens(event.content, c);
  mentions(event.content, c);
  speakers(event, c);
  // Tool output (result, error) is machine text: its capitalised words are column headers and
  // log levels, not names.
  if (event.kind != "result" && event.kind != "error") capitalised_runs(event.content, c);

  Extraction& out = c.out();
  for (const auto& [alias, canonical] : c.aliases()) out.aliases.push_back({alias, canonical});

  // Relations. The primary entity: first explicit/target/file mention, else the agent.
  std::string primary;
  for (const auto& m : out.mentions) {
    if (m.primary && m.type != "module") {
      primary = m.key;
      break;
    }
  }
  if (primary.empty()) {
    for (const auto& m : out.mentions) {
      if (m.type == "agent") {
        primary = m.key;
        break;
      }
    }
  }
  if (event.relations != nullptr && event.relations->is_array() && !primary.empty()) {
    for (const auto& r : *event.relations) {
      if (!r.is_object()) continue;
      const std::string predicate = ascii_lower(string_field(&r, "predicate"));
      std::string target = string_field(&r, "target");
      if (target.empty()) target = string_field(&r, "target_id");
      const auto key = canonical_key(target);
      if (predicate.empty() || !key || *key == primary) continue;
      double weight = 1.0;
      if (const auto w = r.find("weight"); w != r.end() && w->is_number())
        weight = std::clamp(w->get<double>(), 0.0, 1.0);
      if (predicate == "alias_of" || predicate == "same_as") {
        out.aliases.push_back({primary, *key});
      } else {
        out.relations.push_back({primary, *key, predicate, weight});
      }
    }
  }
  const std::string problem = labelled_line(event.content, "Problem:");
  const std::string solution = labelled_line(event.content, "Solution:");
  if (!problem.empty() && !solution.empty()) {
    const auto from = keys_in_line(problem);
    auto to = keys_in_line(solution);
    if (to.empty()) {
      for (const auto& m : out.mentions) {
        if (m.type == "file" && m.primary && to.size() < 8) to.push_back(m.key);
      }
    }
    for (const auto& a : from) {
      for (const auto& b : to) {
        if (a != b) out.relations.push_back({a, b, "solved_by", 1.0});
      }
    }
  }
  return std::move(out);
}

}  // namespace reflectd::text
