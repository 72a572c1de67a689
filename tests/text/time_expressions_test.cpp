// Time expressions (text/time_expressions.hpp): every rule of docs/RECALL.md "Time
// expressions" on hand-made sentences, against a fixed reference day.

#include <catch2/catch.hpp>

#include "common/timestamp.hpp"
#include "text/time_expressions.hpp"

namespace {

using namespace reflectd;

// Monday 8 May 2023, 13:57 UTC.
const std::int64_t kReferenceDay = *parse_rfc3339_us("2023-05-08T13:57:00Z");

std::string time_label(const std::string& text) {
  const auto found = text::find_time_expressions(text, kReferenceDay);
  REQUIRE(found.size() == 1);
  return found[0].range.label;
}

// Each text holds one expression, resolved to its label.
void check_labels(std::initializer_list<std::pair<const char*, const char*>> cases) {
  for (const auto& [text, label] : cases) {
    INFO(text);
    CHECK(time_label(text) == label);
  }
}

std::int64_t day_us(const char* day) { return *parse_rfc3339_us(std::string(day) + "T00:00:00Z"); }

}  // namespace

TEST_CASE("time expressions resolve against the reference day") {
  check_labels({
      {"I went to a support group yesterday", "7 May 2023"},
      {"see you tomorrow", "9 May 2023"},
      {"last night was fun", "7 May 2023"},
      {"last Saturday we hiked", "6 May 2023"},
      {"last Monday", "1 May 2023"},
      {"next Friday", "12 May 2023"},
      {"last week I painted", "the week before 8 May 2023"},
      {"last weekend", "the weekend of 6 May 2023"},
      {"this weekend", "the weekend of 13 May 2023"},
      {"next weekend", "the weekend of 20 May 2023"},
      {"last month", "April 2023"},
      {"next month", "June 2023"},
      {"last year", "2022"},
      {"two weeks ago", "the week of 24 April 2023"},
      {"3 days ago", "5 May 2023"},
      {"a few years ago", "2020"},
      {"a couple of months ago", "March 2023"},
      {"on 7 May 2023", "7 May 2023"},
      {"on May 7, 2023", "7 May 2023"},
      {"in May 2023", "May 2023"},
      {"in 2022", "2022"},
      {"We met in September 2022", "September 2022"},
      {"since January 2020", "January 2020"},
      {"in May", "May 2023"},
      {"in June, before the trip", "June 2023"},
  });
  CHECK(text::find_time_expressions("May I help? We may go.", kReferenceDay).empty());
  CHECK(text::find_time_expressions("2022 was the count", kReferenceDay).empty());

  const auto ranges = text::find_time_expressions("yesterday", kReferenceDay);
  CHECK(ranges[0].range.from_us == *parse_rfc3339_us("2023-05-07T00:00:00Z"));
  CHECK(ranges[0].range.to_us == *parse_rfc3339_us("2023-05-08T00:00:00Z"));
  CHECK(ranges[0].relative);
  CHECK_FALSE(text::find_time_expressions("in 2022", kReferenceDay)[0].relative);

  CHECK(text::with_absolute_dates("I went yesterday, and last week too.", kReferenceDay) ==
        "I went yesterday [7 May 2023], and last week [the week before 8 May 2023] too.");
  CHECK(text::with_absolute_dates("Born on 7 May 2023.", kReferenceDay) == "Born on 7 May 2023.");
  CHECK(text::with_absolute_dates("We met in September 2022.", kReferenceDay) ==
        "We met in September 2022.");
}

TEST_CASE("time expressions anchored on a named day count from that day") {
  check_labels({
      {"the week before August 3, 2023", "the week before 3 August 2023"},
      {"two weeks before August 11, 2023", "the week of 28 July 2023"},
      {"last weekend before April 10, 2023", "the weekend of 8 April 2023"},
      {"What did she finish last Friday on 23 January, 2022?", "21 January 2022"},
      {"the day before 3 June 2023", "2 June 2023"},
      {"3 days after 1 May 2023", "4 May 2023"},
      {"a month prior to 3 June 2023", "May 2023"},
      {"the week after 1 May 2023", "the week after 1 May 2023"},
      {"on the Sunday before October 25, 2022", "23 October 2022"},
  });

  // Anchored on a relative day, the result is relative too.
  const auto before_yesterday =
      text::find_time_expressions("the day before yesterday", kReferenceDay);
  REQUIRE(before_yesterday.size() == 1);
  CHECK(before_yesterday[0].range.label == "6 May 2023");
  CHECK(before_yesterday[0].relative);
  CHECK_FALSE(
      text::find_time_expressions("the week before 3 August 2023", kReferenceDay)[0].relative);

  const auto week = text::find_time_expressions("the week before August 3, 2023", kReferenceDay);
  CHECK(week[0].range.from_us == day_us("2023-07-27"));
  CHECK(week[0].range.to_us == day_us("2023-08-03"));
  CHECK(week[0].phrase == "the week before August 3, 2023");
}

TEST_CASE("time expressions: days without a year, parts of a month and seasons") {
  check_labels({
      {"on July 12th, 2022", "12 July 2022"},
      {"on July 12", "12 July 2023"},
      {"the 12th of July", "12 July 2023"},
      {"12 July", "12 July 2023"},
  });
  CHECK(text::find_time_expressions("on July 12", kReferenceDay)[0].relative);
  // A day without a year takes the year of the dated day it is paired with.
  const auto pair =
      text::find_time_expressions("between August 11 and August 15 2021", kReferenceDay);
  REQUIRE(pair.size() == 2);
  CHECK(pair[0].range.label == "11 August 2021");
  CHECK(pair[1].range.label == "15 August 2021");
  CHECK(text::covering_range(pair).label == "11 August 2021 to 15 August 2021");
  // Only the next day is read for the year: a long run of days is one pass, not a recursion.
  std::string run;
  for (int i = 0; i < 50'000; ++i) run += "July 1 and ";
  run += "July 2, 2021";
  const auto days = text::find_time_expressions(run, kReferenceDay);
  REQUIRE(days.size() == 50'001);
  CHECK(days[0].range.label == "1 July 2023");
  CHECK(days[49'998].range.label == "1 July 2023");
  CHECK(days[49'999].range.label == "1 July 2021");
  CHECK(days[50'000].range.label == "2 July 2021");
  // "may" and "march" are verbs unless capitalised.
  CHECK(text::find_time_expressions("we may 2 go, then march 5 miles", kReferenceDay).empty());
  check_labels({
      {"We met May 2", "2 May 2023"},
  });

  check_labels({
      {"early November 2022", "early November 2022"},
      {"in the beginning of November 2022", "early November 2022"},
      {"the first half of September 2022", "the first half of September 2022"},
      {"the last week of May", "the last week of May 2023"},
      {"mid-May", "mid May 2023"},
  });
  const auto late = text::find_time_expressions("late February 2024", kReferenceDay);
  CHECK(late[0].range.from_us == day_us("2024-02-21"));
  CHECK(late[0].range.to_us == day_us("2024-03-01"));
  const auto half = text::find_time_expressions("the first half of September 2022", kReferenceDay);
  CHECK(half[0].range.from_us == day_us("2022-09-01"));
  CHECK(half[0].range.to_us == day_us("2022-09-16"));
  const auto last_week = text::find_time_expressions("the last week of May", kReferenceDay);
  CHECK(last_week[0].range.from_us == day_us("2023-05-25"));
  CHECK(last_week[0].range.to_us == day_us("2023-06-01"));

  check_labels({
      {"in summer 2021", "summer 2021"},
      {"in the summer of 2022", "summer 2022"},
      {"during the summer", "summer 2023"},
      {"last summer", "summer 2022"},
      {"next fall", "fall 2024"},
      {"this autumn", "fall 2023"},
  });
  const auto winter = text::find_time_expressions("last winter", kReferenceDay);
  CHECK(winter[0].range.label == "winter 2022");
  CHECK(winter[0].range.from_us == day_us("2022-12-01"));
  CHECK(winter[0].range.to_us == day_us("2023-03-01"));
  const auto summer = text::find_time_expressions("in the summer of 2022", kReferenceDay);
  CHECK(summer[0].phrase == "the summer of 2022");
  CHECK(summer[0].range.from_us == day_us("2022-06-01"));
  CHECK(summer[0].range.to_us == day_us("2022-09-01"));
  // A season alone, with no "the" after a preposition, is not a date ("spring water").
  CHECK(text::find_time_expressions("spring water and summer rain", kReferenceDay).empty());
}
