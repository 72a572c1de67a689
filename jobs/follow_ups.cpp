#include "jobs/follow_ups.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "common/ascii.hpp"

namespace reflectd::jobs {

Topics::Topics(text::Tokenizer& tokenizer, const std::vector<std::string>& names)
    : tokenizer_(tokenizer) {
  for (const char* word :
       {"january",   "february",  "march",   "april",    "may",      "june",   "july",
        "august",    "september", "october", "november", "december", "monday", "tuesday",
        "wednesday", "thursday",  "friday",  "saturday", "sunday",   "week",   "weekend",
        "month",     "year",      "day",     "others"}) {
    ignored_.insert(tokenizer_.stem(word));
  }
  for (const std::string& name : names) {
    for (const auto& [stem, surface] : tokenizer_.terms(name)) ignored_.insert(stem);
  }
}

Topic Topics::of(std::string_view text) {
  Topic topic;
  std::string previous;  // the stem before, while only spaces separate it from the next word
  auto letter = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           static_cast<unsigned char>(c) >= 0x80;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t begin = i;
    while (i < text.size() && letter(text[i])) ++i;
    if (i == begin) {
      if (text[i] != ' ') previous.clear();
      ++i;
      continue;
    }
    const std::string word = ascii_lower(text.substr(begin, i - begin));
    const bool digits = word.find_first_not_of("0123456789") == std::string::npos;
    const std::string stem = digits || word.size() < 3 || text::Tokenizer::is_stop_word(word)
                                 ? ""
                                 : tokenizer_.stem(word);
    if (stem.empty() || ignored_.contains(stem)) {
      previous.clear();
      continue;
    }
    topic.stems.insert(stem);
    if (!previous.empty()) topic.pairs.insert(previous + " " + stem);
    previous = stem;
  }
  return topic;
}

bool speaks_of(const Topic& later, const Topic& earlier) {
  if (earlier.stems.empty()) return false;
  if (!earlier.pairs.empty()) {
    return std::any_of(earlier.pairs.begin(), earlier.pairs.end(),
                       [&](const std::string& pair) { return later.pairs.contains(pair); });
  }
  std::size_t shared = 0;
  for (const std::string& stem : earlier.stems) shared += later.stems.contains(stem) ? 1 : 0;
  return shared >= std::min<std::size_t>(2, earlier.stems.size());
}

// The others are what the speaker felt of the plan.
std::vector<bool> taken_up(SQLite::Database& db, const std::string& ns,
                           const std::vector<std::string>& kinds, const std::vector<Said>& said,
                           std::int64_t until_us, const std::vector<std::string>& not_from,
                           Topics& topics, std::size_t max_events) {
  std::vector<bool> out(said.size(), false);
  if (said.empty()) return out;
  std::int64_t earliest = said.front().from_us;
  for (const Said& s : said) earliest = std::min(earliest, s.from_us);
  SQLite::Statement later(db, R"sql(
SELECT ts_us, content FROM events WHERE namespace = ?1
  AND kind IN (SELECT value FROM json_each(?2)) AND ts_us >= ?3
  AND ts_us <= ?4 AND status = 'active' ORDER BY ts_us, seq LIMIT ?5)sql");
  later.bind(1, ns);
  later.bind(2, nlohmann::json(kinds).dump());
  later.bind(3, earliest);
  later.bind(4, until_us);
  later.bind(5, static_cast<std::int64_t>(max_events));
  std::vector<Topic> wanted;
  wanted.reserve(said.size());
  for (const Said& s : said) wanted.push_back(topics.of(s.text));
  while (later.executeStep()) {
    const std::int64_t ts = later.getColumn(0).getInt64();
    const std::string content = later.getColumn(1).getString();
    if (std::any_of(not_from.begin(), not_from.end(),
                    [&](const std::string& prefix) { return content.starts_with(prefix); })) {
      continue;
    }
    const Topic topic = topics.of(content);
    for (std::size_t i = 0; i < said.size(); ++i) {
      if (!out[i] && ts >= said[i].from_us && speaks_of(topic, wanted[i])) out[i] = true;
    }
  }
  return out;
}

std::string_view dated_sentence(std::string_view statement) {
  std::size_t begin = 0;
  while (begin < statement.size()) {
    std::size_t end = statement.find_first_of(".!?", begin);
    end = end == std::string_view::npos ? statement.size() : end + 1;
    const std::string_view sentence = statement.substr(begin, end - begin);
    for (std::size_t i = 0; i + 4 <= sentence.size(); ++i) {
      const bool year = (sentence.compare(i, 2, "19") == 0 || sentence.compare(i, 2, "20") == 0) &&
                        std::isdigit(static_cast<unsigned char>(sentence[i + 2])) != 0 &&
                        std::isdigit(static_cast<unsigned char>(sentence[i + 3])) != 0;
      if (year) return sentence;
    }
    begin = end;
  }
  return statement;
}

}  // namespace reflectd::jobs
