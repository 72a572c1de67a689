#include "text/time_expressions.hpp"

#include <array>
#include <chrono>
#include <optional>

#include "common/date.hpp"

namespace reflectd::text {
namespace {

using date::days;
using date::sys_days;

constexpr std::array<const char*, 12> kMonths{"january",   "february", "march",    "april",
                                              "may",       "june",     "july",     "august",
                                              "september", "october",  "november", "december"};
constexpr std::array<const char*, 12> kMonthLabels{"January",   "February", "March",    "April",
                                                   "May",       "June",     "July",     "August",
                                                   "September", "October",  "November", "December"};
// date::weekday numbering: Sunday = 0.
constexpr std::array<const char*, 7> kWeekdays{"sunday",   "monday", "tuesday", "wednesday",
                                               "thursday", "friday", "saturday"};

struct TimeWord {
  std::size_t begin;
  std::size_t end;
  std::string lower;  // ASCII lower case
};

std::vector<TimeWord> split_words(std::string_view text) {
  std::vector<TimeWord> words;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (std::isalnum(c) == 0) {
      ++i;
      continue;
    }
    TimeWord word{i, i, {}};
    while (i < text.size() && std::isalnum(static_cast<unsigned char>(text[i])) != 0) {
      word.lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(text[i]))));
      ++i;
    }
    word.end = i;
    words.push_back(std::move(word));
  }
  return words;
}

sys_days day_of(std::int64_t us) {
  return date::floor<days>(sys_days{} + std::chrono::microseconds{us});
}
std::int64_t us_of(sys_days day) {
  return std::chrono::duration_cast<std::chrono::microseconds>(day.time_since_epoch()).count();
}

std::string day_label(sys_days day) {
  const date::year_month_day ymd{day};
  return std::to_string(static_cast<unsigned>(ymd.day())) + " " +
         kMonthLabels[static_cast<unsigned>(ymd.month()) - 1] + " " +
         std::to_string(static_cast<int>(ymd.year()));
}
std::string month_label(date::year_month ym) {
  return std::string(kMonthLabels[static_cast<unsigned>(ym.month()) - 1]) + " " +
         std::to_string(static_cast<int>(ym.year()));
}

TimeRange day_range(sys_days day) { return {us_of(day), us_of(day + days{1}), day_label(day)}; }
TimeRange days_range(sys_days from, sys_days to, std::string label) {
  return {us_of(from), us_of(to), std::move(label)};
}
TimeRange month_range(date::year_month ym) {
  const sys_days first{ym / 1};
  const sys_days next{(ym + date::months{1}) / 1};
  return {us_of(first), us_of(next), month_label(ym)};
}
TimeRange year_range(date::year y) {
  return {us_of(sys_days{y / 1 / 1}), us_of(sys_days{(y + date::years{1}) / 1 / 1}),
          std::to_string(static_cast<int>(y))};
}

std::optional<int> month_index(const std::string& w) {
  for (std::size_t m = 0; m < kMonths.size(); ++m) {
    if (w == kMonths[m]) return static_cast<int>(m) + 1;
    // Three-letter abbreviations ("Jan", "Sept" too), but not "may"'s own word twice.
    if (w.size() >= 3 && w.size() < std::string_view(kMonths[m]).size() &&
        std::string_view(kMonths[m]).starts_with(w) && (w.size() == 3 || w == "sept")) {
      return static_cast<int>(m) + 1;
    }
  }
  return std::nullopt;
}
std::optional<int> weekday_index(const std::string& w) {
  for (std::size_t d = 0; d < kWeekdays.size(); ++d) {
    if (w == kWeekdays[d]) return static_cast<int>(d);
  }
  return std::nullopt;
}
std::optional<int> small_number(const std::string& w) {
  static constexpr std::array<const char*, 13> kNumbers{"zero", "one",    "two",   "three", "four",
                                                        "five", "six",    "seven", "eight", "nine",
                                                        "ten",  "eleven", "twelve"};
  for (std::size_t n = 0; n < kNumbers.size(); ++n) {
    if (w == kNumbers[n]) return static_cast<int>(n);
  }
  if (w == "a" || w == "an") return 1;
  if (!w.empty() && w.size() <= 3 && w.find_first_not_of("0123456789") == std::string::npos) {
    return std::stoi(w);
  }
  return std::nullopt;
}
std::optional<int> year_number(const std::string& w) {
  if (w.size() != 4 || w.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const int y = std::stoi(w);
  if (y < 1900 || y > 2099) return std::nullopt;
  return y;
}
std::optional<int> day_number(const std::string& w) {
  std::string digits = w;
  for (const char* suffix : {"st", "nd", "rd", "th"}) {
    if (digits.size() > 2 && digits.ends_with(suffix)) digits.resize(digits.size() - 2);
  }
  if (digits.empty() || digits.size() > 2 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  const int d = std::stoi(digits);
  if (d < 1 || d > 31) return std::nullopt;
  return d;
}

// A match: words [i, i + length) resolved to `range`.
struct Match {
  std::size_t length = 0;
  TimeRange range;
  bool relative = true;
};

class Matcher {
 public:
  Matcher(const std::vector<TimeWord>& words, std::int64_t reference_us)
      : w_(words), today_(day_of(reference_us)) {}

  std::optional<Match> at(std::size_t i) const {
    if (auto m = relative_day(i)) return m;
    if (auto m = relative_unit(i)) return m;
    if (auto m = ago(i)) return m;
    if (auto m = absolute(i)) return m;
    return std::nullopt;
  }

 private:
  const std::string& word(std::size_t i) const {
    static const std::string kNone;
    return i < w_.size() ? w_[i].lower : kNone;
  }

  std::optional<Match> relative_day(std::size_t i) const {
    const std::string& a = word(i);
    if (a == "yesterday") return Match{1, day_range(today_ - days{1})};
    if (a == "today" || a == "tonight") return Match{1, day_range(today_)};
    if (a == "tomorrow") return Match{1, day_range(today_ + days{1})};
    const std::string& b = word(i + 1);
    if (a == "last" && b == "night") return Match{2, day_range(today_ - days{1})};
    if (a == "this" && (b == "morning" || b == "afternoon" || b == "evening")) {
      return Match{2, day_range(today_)};
    }
    return std::nullopt;
  }

  // last/this/next + weekday, week, weekend, month, year; "this past" + the same.
  std::optional<Match> relative_unit(std::size_t i) const {
    std::size_t n = 1;
    int direction = 0;
    if (word(i) == "last") {
      direction = -1;
    } else if (word(i) == "next") {
      direction = 1;
    } else if (word(i) == "this" && word(i + 1) == "past") {
      direction = -1;
      n = 2;
    } else if (word(i) == "this") {
      direction = 0;
    } else {
      return std::nullopt;
    }
    const std::string& unit = word(i + n);
    const std::size_t length = n + 1;
    if (auto wd = weekday_index(unit)) {
      const date::weekday target{static_cast<unsigned>(*wd)};
      const date::weekday now{today_};
      if (direction < 0) {
        auto back = (now - target).count();
        if (back == 0) back = 7;
        const sys_days day = today_ - days{back};
        return Match{length, day_range(day)};
      }
      auto ahead = (target - now).count();
      if (ahead == 0 && direction > 0) ahead = 7;
      return Match{length, day_range(today_ + days{ahead})};
    }
    if (unit == "week") {
      if (direction < 0) {
        return Match{length,
                     days_range(today_ - days{7}, today_, "the week before " + day_label(today_))};
      }
      if (direction > 0) {
        return Match{length, days_range(today_ + days{1}, today_ + days{8},
                                        "the week after " + day_label(today_))};
      }
      return Match{length, days_range(today_ - days{3}, today_ + days{4},
                                      "the week of " + day_label(today_))};
    }
    if (unit == "weekend") {
      const date::weekday now{today_};
      const auto since_saturday = (now - date::Saturday).count();
      sys_days saturday = today_ - days{since_saturday};
      // From Monday on, the weekend just past is "last weekend" and "this weekend" is the
      // coming one; on Saturday and Sunday "this weekend" is the current one.
      if (direction < 0 && since_saturday < 2) saturday -= days{7};
      if (direction == 0 && since_saturday >= 2) saturday += days{7};
      if (direction > 0) saturday += since_saturday >= 2 ? days{14} : days{7};
      return Match{length, days_range(saturday, saturday + days{2},
                                      "the weekend of " + day_label(saturday))};
    }
    if (unit == "month") {
      const date::year_month_day ymd{today_};
      return Match{length, month_range(ymd.year() / ymd.month() + date::months{direction})};
    }
    if (unit == "year") {
      const date::year_month_day ymd{today_};
      return Match{length, year_range(ymd.year() + date::years{direction})};
    }
    return std::nullopt;
  }

  // N days/weeks/months/years ago; "a couple of", "a few".
  std::optional<Match> ago(std::size_t i) const {
    std::optional<int> count;
    std::size_t n = 1;
    if (word(i) == "a" && word(i + 1) == "couple" && word(i + 2) == "of") {
      count = 2;
      n = 3;
    } else if (word(i) == "a" && word(i + 1) == "few") {
      count = 3;
      n = 2;
    } else if (word(i) == "couple" && word(i + 1) == "of") {
      count = 2;
      n = 2;
    } else {
      count = small_number(word(i));
    }
    if (!count || word(i + n + 1) != "ago") return std::nullopt;
    std::string unit = word(i + n);
    if (unit.ends_with('s')) unit.pop_back();
    const std::size_t length = n + 2;
    const int k = *count;
    if (unit == "day") return Match{length, day_range(today_ - days{k})};
    if (unit == "week") {
      const sys_days day = today_ - days{7 * k};
      return Match{length,
                   days_range(day - days{3}, day + days{4}, "the week of " + day_label(day))};
    }
    if (unit == "month") {
      const date::year_month_day ymd{today_};
      return Match{length, month_range(ymd.year() / ymd.month() - date::months{k})};
    }
    if (unit == "year") {
      const date::year_month_day ymd{today_};
      return Match{length, year_range(ymd.year() - date::years{k})};
    }
    return std::nullopt;
  }

  std::optional<Match> absolute(std::size_t i) const {
    // "7 May 2023", "7th of May 2023", "7 May"
    if (auto d = day_number(word(i))) {
      std::size_t at = i + 1;
      if (word(at) == "of") ++at;
      if (auto m = month_index(word(at))) {
        if (auto y = year_number(word(at + 1))) {
          return dated(at + 2 - i, date::year{*y}, *m, *d);
        }
      }
    }
    if (auto m = month_index(word(i))) {
      // "May" alone is a verb far more often than a month: require a day or a year with it,
      // or "in" before it.
      if (auto d = day_number(word(i + 1))) {
        if (auto y = year_number(word(i + 2))) return dated(3, date::year{*y}, *m, *d);
      }
      if (auto y = year_number(word(i + 1))) {
        return Match{2, month_range(date::year{*y} / date::month{static_cast<unsigned>(*m)}),
                     false};
      }
    }
    const std::string& a = word(i);
    if (a == "in" || a == "since" || a == "during" || a == "of" || a == "from") {
      if (auto y = year_number(word(i + 1))) {
        // Absolute: the span is the year, keeping the preposition out of the phrase.
        Match m{2, year_range(date::year{*y}), false};
        return m;
      }
      // "in May" (the month of the reference year); "in September 2022" and "in May 7, 2023"
      // are left to the absolute rules at the next word.
      if (auto m = month_index(word(i + 1));
          m && (word(i + 1).size() > 3 || word(i + 1) == "may") && !year_number(word(i + 2)) &&
          !day_number(word(i + 2))) {
        const date::year_month_day ymd{today_};
        return Match{2, month_range(ymd.year() / date::month{static_cast<unsigned>(*m)})};
      }
    }
    return std::nullopt;
  }

  static std::optional<Match> dated(std::size_t length, date::year y, int m, int d) {
    const date::year_month_day ymd{y / date::month{static_cast<unsigned>(m)} /
                                   date::day{static_cast<unsigned>(d)}};
    if (!ymd.ok()) return std::nullopt;
    return Match{length, day_range(sys_days{ymd}), false};
  }

  const std::vector<TimeWord>& w_;
  sys_days today_;
};

}  // namespace

std::vector<TimeMention> find_time_expressions(std::string_view text, std::int64_t reference_us) {
  const std::vector<TimeWord> words = split_words(text);
  const Matcher matcher(words, reference_us);
  std::vector<TimeMention> out;
  for (std::size_t i = 0; i < words.size();) {
    const std::optional<Match> m = matcher.at(i);
    if (!m) {
      ++i;
      continue;
    }
    std::size_t first = i;
    // A leading preposition belongs to the sentence, not to the date.
    const std::string& lead = words[first].lower;
    if (m->length > 1 &&
        (lead == "in" || lead == "since" || lead == "during" || lead == "of" || lead == "from")) {
      ++first;
    }
    TimeMention mention;
    mention.begin = words[first].begin;
    mention.end = words[i + m->length - 1].end;
    mention.phrase = std::string(text.substr(mention.begin, mention.end - mention.begin));
    mention.range = m->range;
    mention.relative = m->relative;
    out.push_back(std::move(mention));
    i += m->length;
  }
  return out;
}

std::string with_absolute_dates(std::string_view text, std::int64_t reference_us) {
  std::string out;
  std::size_t copied = 0;
  for (const TimeMention& mention : find_time_expressions(text, reference_us)) {
    if (!mention.relative) continue;
    out.append(text.substr(copied, mention.end - copied));
    out += " [" + mention.range.label + "]";
    copied = mention.end;
  }
  out.append(text.substr(copied));
  return out;
}

std::string format_day(std::int64_t us) { return day_label(day_of(us)); }

TimeRange covering_range(const std::vector<TimeMention>& mentions) {
  TimeRange range;
  for (const TimeMention& m : mentions) {
    if (range.label.empty()) {
      range = m.range;
      continue;
    }
    range.from_us = std::min(range.from_us, m.range.from_us);
    range.to_us = std::max(range.to_us, m.range.to_us);
    range.label = format_day(range.from_us) + " to " + format_day(range.to_us - 1);
  }
  return range;
}

}  // namespace reflectd::text
