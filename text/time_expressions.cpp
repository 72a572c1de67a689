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
  bool capital;       // written with a capital first letter
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
    TimeWord word{i, i, {}, std::isupper(c) != 0};
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

TimeRange week_range(int direction, sys_days today) {
  if (direction < 0)
    return days_range(today - days{7}, today, "the week before " + day_label(today));
  if (direction > 0) {
    return days_range(today + days{1}, today + days{8}, "the week after " + day_label(today));
  }
  return days_range(today - days{3}, today + days{4}, "the week of " + day_label(today));
}

TimeRange weekend_range(int direction, sys_days today) {
  const date::weekday now{today};
  const auto since_saturday = (now - date::Saturday).count();
  sys_days saturday = today - days{since_saturday};
  // From Monday on, the weekend just past is "last weekend" and "this weekend" is the coming
  // one; on Saturday and Sunday "this weekend" is the current one.
  if (direction < 0 && since_saturday < 2) saturday -= days{7};
  if (direction == 0 && since_saturday >= 2) saturday += days{7};
  if (direction > 0) saturday += since_saturday >= 2 ? days{14} : days{7};
  return days_range(saturday, saturday + days{2}, "the weekend of " + day_label(saturday));
}

// Meteorological seasons of the northern hemisphere: spring March-May, summer June-August,
// autumn September-November, winter December to February (winter 2022 starts in December
// 2022).
std::optional<int> season_start_month(const std::string& w) {
  if (w == "spring") return 3;
  if (w == "summer") return 6;
  if (w == "fall" || w == "autumn") return 9;
  if (w == "winter") return 12;
  return std::nullopt;
}
TimeRange season_range(const std::string& season, int start_month, date::year y) {
  const date::year_month first = y / date::month{static_cast<unsigned>(start_month)};
  return {us_of(sys_days{first / 1}), us_of(sys_days{(first + date::months{3}) / 1}),
          season + " " + std::to_string(static_cast<int>(y))};
}
// The season's year "this summer" names: the one under way or, before it starts, the coming.
date::year season_year(int start_month, sys_days today) {
  const date::year_month_day ymd{today};
  // January and February belong to the winter that started the December before.
  if (start_month == 12 && static_cast<unsigned>(ymd.month()) <= 2) {
    return ymd.year() - date::years{1};
  }
  return ymd.year();
}

// "last/this/next <unit>" resolved at `today`: a weekday (the nearest one strictly before or
// after), week, weekend, month, year or season.
std::optional<TimeRange> unit_range(const std::string& unit, int direction, sys_days today) {
  if (auto wd = weekday_index(unit)) {
    const date::weekday target{static_cast<unsigned>(*wd)};
    const date::weekday now{today};
    if (direction < 0) {
      auto back = (now - target).count();
      if (back == 0) back = 7;
      return day_range(today - days{back});
    }
    auto ahead = (target - now).count();
    if (ahead == 0 && direction > 0) ahead = 7;
    return day_range(today + days{ahead});
  }
  if (unit == "week") return week_range(direction, today);
  if (unit == "weekend") return weekend_range(direction, today);
  const date::year_month_day ymd{today};
  if (unit == "month") return month_range(ymd.year() / ymd.month() + date::months{direction});
  if (unit == "year") return year_range(ymd.year() + date::years{direction});
  if (auto start = season_start_month(unit)) {
    return season_range(unit == "autumn" ? "fall" : unit, *start,
                        season_year(*start, today) + date::years{direction});
  }
  return std::nullopt;
}

// `count` days/weeks/months/years before (sign -1) or after (+1) `today`.
std::optional<TimeRange> shifted_range(std::string unit, int count, int sign, sys_days today) {
  if (unit.ends_with('s')) unit.pop_back();
  const int k = sign * count;
  if (unit == "day") return day_range(today + days{k});
  if (unit == "week") {
    const sys_days day = today + days{7 * k};
    return days_range(day - days{3}, day + days{4}, "the week of " + day_label(day));
  }
  const date::year_month_day ymd{today};
  if (unit == "month") return month_range(ymd.year() / ymd.month() + date::months{k});
  if (unit == "year") return year_range(ymd.year() + date::years{k});
  return std::nullopt;
}

// A part of a month: early/mid/late, the beginning/middle/end, the first/second half, the
// first/second/third/fourth/last week. Days [first, last] of the month, `last` 0 for its end.
struct MonthPart {
  std::size_t length;  // words before the month name
  unsigned first;
  unsigned last;
  const char* label;
};

class Matcher {
 public:
  Matcher(const std::vector<TimeWord>& words, std::int64_t reference_us)
      : w_(words), today_(day_of(reference_us)) {}

  std::optional<Match> at(std::size_t i) const {
    if (auto m = anchored_shift(i)) return m;
    if (auto m = anchored_relative(i)) return m;
    if (auto m = part_of_month(i)) return m;
    if (auto m = season(i)) return m;
    return unanchored(i);
  }

 private:
  const std::string& word(std::size_t i) const {
    static const std::string kNone;
    return i < w_.size() ? w_[i].lower : kNone;
  }

  struct Count {
    int value;
    std::size_t words;
  };
  // A count of units at word i: digits, a/an, one..twelve, "a couple of" (2), "a few" (3).
  std::optional<Count> count_at(std::size_t i) const {
    if (word(i) == "a" && word(i + 1) == "couple" && word(i + 2) == "of") return Count{2, 3};
    if (word(i) == "a" && word(i + 1) == "few") return Count{3, 2};
    if (word(i) == "couple" && word(i + 1) == "of") return Count{2, 2};
    if (auto n = small_number(word(i))) return Count{*n, 1};
    return std::nullopt;
  }

  std::optional<Match> unanchored(std::size_t i) const {
    if (auto m = relative_day(i)) return m;
    if (auto m = relative_unit(i)) return m;
    if (auto m = ago(i)) return m;
    return absolute(i);
  }

  // One day named at word i ("3 June 2023", "June 3rd", "yesterday"): the anchor of "two
  // weeks before …", "the day before yesterday" and "last Friday on …".
  std::optional<Match> anchor_day(std::size_t i) const {
    auto m = unanchored(i);
    if (!m || m->range.to_us - m->range.from_us != us_of(sys_days{days{1}})) return std::nullopt;
    return m;
  }
  bool before_or_after(std::size_t i, int& sign, std::size_t& n) const {
    if (word(i) == "before" || word(i) == "earlier") {
      sign = -1;
      n = 1;
    } else if (word(i) == "prior" && word(i + 1) == "to") {
      sign = -1;
      n = 2;
    } else if (word(i) == "after" || word(i) == "later") {
      sign = 1;
      n = 1;
    } else {
      return false;
    }
    return true;
  }

  // "the day before 3 June 2023", "two weeks before 11 August 2023", "a month after …",
  // "the weekend before …": the shift is counted from the named day, not from the reference.
  std::optional<Match> anchored_shift(std::size_t i) const {
    // "the day before" is one day before.
    const auto counted = word(i) == "the" ? std::optional<Count>{Count{1, 1}} : count_at(i);
    if (!counted) return std::nullopt;
    const int count = counted->value;
    const std::size_t n = counted->words;
    const std::string& unit = word(i + n);
    int sign = 0;
    std::size_t connector = 0;
    if (!before_or_after(i + n + 1, sign, connector)) return std::nullopt;
    const std::size_t at = i + n + 1 + connector;
    const auto anchor = anchor_day(at);
    if (!anchor) return std::nullopt;
    const sys_days day = day_of(anchor->range.from_us);
    std::optional<TimeRange> range;
    if (word(i) == "the" && (unit == "week" || unit == "weekend")) {
      range = unit == "week" ? week_range(sign, day) : weekend_range(sign, day);
    } else if (word(i) == "the" && weekday_index(unit)) {
      range = unit_range(unit, sign, day);  // "the Sunday before 25 October 2022"
    } else if (unit == "weekend") {
      return std::nullopt;
    } else {
      range = shifted_range(unit, count, sign, day);
    }
    if (!range) return std::nullopt;
    return Match{at + anchor->length - i, *range, anchor->relative};
  }

  // "last Friday on 23 January 2022", "last weekend before 10 April 2023": a relative
  // expression resolved against the named day instead of the reference.
  std::optional<Match> anchored_relative(std::size_t i) const {
    const auto relative = relative_unit(i);
    if (!relative) return std::nullopt;
    const std::size_t after = i + relative->length;
    const std::string& link = word(after);
    if (link != "on" && link != "before" && link != "of" && link != "as") return std::nullopt;
    std::size_t at = after + 1;
    if (link == "as" && word(at) == "of") ++at;
    const auto anchor = anchor_day(at);
    if (!anchor) return std::nullopt;
    const Matcher there(w_, anchor->range.from_us);
    auto m = there.relative_unit(i);
    if (!m) return std::nullopt;
    return Match{at + anchor->length - i, m->range, anchor->relative};
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

  // last/this/next + weekday, week, weekend, month, year, season; "this past" + the same.
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
    } else if (word(i) != "this") {
      return std::nullopt;
    }
    auto range = unit_range(word(i + n), direction, today_);
    if (!range) return std::nullopt;
    return Match{n + 1, *range};
  }

  // N days/weeks/months/years ago; "a couple of", "a few".
  std::optional<Match> ago(std::size_t i) const {
    const auto counted = count_at(i);
    if (!counted || word(i + counted->words + 1) != "ago") return std::nullopt;
    const std::size_t n = counted->words;
    auto range = shifted_range(word(i + n), counted->value, -1, today_);
    if (!range) return std::nullopt;
    return Match{n + 2, *range};
  }

  // "summer 2021", "the summer of 2022", "during the summer" (the reference's season).
  std::optional<Match> season(std::size_t i) const {
    std::size_t at = i;
    const bool lead = word(i) == "in" || word(i) == "during" || word(i) == "over";
    if (lead) ++at;
    const bool the = word(at) == "the";
    if (the) ++at;
    const auto start = season_start_month(word(at));
    if (!start) return std::nullopt;
    const std::string name = word(at) == "autumn" ? "fall" : word(at);
    std::size_t year_at = at + 1;
    if (word(year_at) == "of") ++year_at;
    if (auto y = year_number(word(year_at))) {
      // The article and the preposition belong to the sentence, not to the date.
      return Match{year_at + 1 - i, season_range(name, *start, date::year{*y}), false};
    }
    if (!lead || !the) return std::nullopt;
    return Match{at + 1 - i, season_range(name, *start, season_year(*start, today_))};
  }

  std::optional<MonthPart> month_part(std::size_t i) const {
    const std::string& a = word(i);
    if (a == "early") return MonthPart{1, 1, 10, "early"};
    if (a == "mid") return MonthPart{1, 11, 20, "mid"};
    if (a == "late") return MonthPart{1, 21, 0, "late"};
    const std::size_t at = a == "the" ? i + 1 : i;
    const std::string& b = word(at);
    const std::size_t skip = at - i;
    if (word(at + 1) == "of") {
      if (b == "beginning" || b == "start") return MonthPart{skip + 2, 1, 10, "early"};
      if (b == "middle") return MonthPart{skip + 2, 11, 20, "mid"};
      if (b == "end") return MonthPart{skip + 2, 21, 0, "late"};
    }
    if (word(at + 2) != "of") return std::nullopt;
    const std::string& c = word(at + 1);
    if (c == "half") {
      if (b == "first") return MonthPart{skip + 3, 1, 15, "the first half of"};
      if (b == "second") return MonthPart{skip + 3, 16, 0, "the second half of"};
    }
    if (c == "week") {
      if (b == "first") return MonthPart{skip + 3, 1, 7, "the first week of"};
      if (b == "second") return MonthPart{skip + 3, 8, 14, "the second week of"};
      if (b == "third") return MonthPart{skip + 3, 15, 21, "the third week of"};
      if (b == "fourth") return MonthPart{skip + 3, 22, 28, "the fourth week of"};
      if (b == "last") return MonthPart{skip + 3, 0, 0, "the last week of"};
    }
    return std::nullopt;
  }

  // "early November 2022", "the beginning of May", "the first half of September 2022".
  std::optional<Match> part_of_month(std::size_t i) const {
    const auto part = month_part(i);
    if (!part) return std::nullopt;
    const std::size_t at = i + part->length;
    const auto m = month_index(word(at));
    if (!m || (word(at).size() == 3 && word(at) != "may")) return std::nullopt;
    const auto y = year_number(word(at + 1));
    const date::year year = y ? date::year{*y} : date::year_month_day{today_}.year();
    const date::year_month ym = year / date::month{static_cast<unsigned>(*m)};
    const unsigned month_days =
        static_cast<unsigned>(date::year_month_day_last{ym / date::last}.day());
    const unsigned first = part->first == 0 ? month_days - 6 : part->first;
    const unsigned last = part->last == 0 ? month_days : part->last;
    const sys_days from{ym / date::day{first}};
    return Match{at + (y ? 2 : 1) - i,
                 days_range(from, from + days{last - first + 1},
                            std::string(part->label) + " " + month_label(ym)),
                 !y};
  }

  // A month and a day with no year: the reference year. "May" and "March" are verbs too, so
  // they must be capitalised here ("we may 2 …", "march 5 miles" are not dates).
  bool month_word(std::size_t i) const {
    return i < w_.size() && ((word(i) != "may" && word(i) != "march") || w_[i].capital);
  }

  // The year of a dated day right after a connector at k ("August 11 and August 15, 2023":
  // "15 August 2023", "August 15th, 2023", "the 15th of August 2023"), else the reference
  // year. Only the next day is read, so a long run of days costs one look each.
  int year_for_yearless(std::size_t k) const {
    const std::string& c = word(k);
    if (c == "and" || c == "to" || c == "through" || c == "till" || c == "until") {
      std::size_t at = k + 1;
      if (word(at) == "the") ++at;
      if (day_number(word(at))) {
        ++at;
        if (word(at) == "of") ++at;
        if (month_index(word(at))) ++at;
      } else if (month_index(word(at)) && day_number(word(at + 1))) {
        at += 2;
      }
      if (at > k + 2) {
        if (auto y = year_number(word(at))) return *y;
      }
    }
    return static_cast<int>(date::year_month_day{today_}.year());
  }

  std::optional<Match> absolute(std::size_t i) const {
    // "7 May 2023", "7th of May 2023", "7 May"
    if (auto d = day_number(word(i))) {
      std::size_t at = i + 1;
      if (word(at) == "of") ++at;
      if (auto m = month_index(word(at))) {
        if (auto y = year_number(word(at + 1))) {
          return dated(at + 2 - i, date::year{*y}, *m, *d, false);
        }
        if (month_word(at)) {
          return dated(at + 1 - i, date::year{year_for_yearless(at + 1)}, *m, *d, true);
        }
      }
    }
    // "the 7th of May"
    if (word(i) == "the" && word(i + 2) == "of" && day_number(word(i + 1)) &&
        month_index(word(i + 3)) && month_word(i + 3) && !year_number(word(i + 4))) {
      return dated(4, date::year{year_for_yearless(i + 4)}, *month_index(word(i + 3)),
                   *day_number(word(i + 1)), true);
    }
    if (auto m = month_index(word(i))) {
      // "May" alone is a verb far more often than a month: require a day or a year with it,
      // or "in" before it.
      if (auto d = day_number(word(i + 1))) {
        if (auto y = year_number(word(i + 2))) return dated(3, date::year{*y}, *m, *d, false);
        if (month_word(i)) {
          return dated(2, date::year{year_for_yearless(i + 2)}, *m, *d, true);
        }
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

  static std::optional<Match> dated(std::size_t length, date::year y, int m, int d, bool relative) {
    const date::year_month_day ymd{y / date::month{static_cast<unsigned>(m)} /
                                   date::day{static_cast<unsigned>(d)}};
    if (!ymd.ok()) return std::nullopt;
    return Match{length, day_range(sys_days{ymd}), relative};
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
    if (m->length > 1 && (lead == "in" || lead == "since" || lead == "during" || lead == "of" ||
                          lead == "from" || lead == "over")) {
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
