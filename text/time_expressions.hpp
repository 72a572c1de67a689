#pragma once
// Time expressions in English text, resolved to absolute dates : a turn
// "I went to a support group yesterday" sent on 8 May 2023 is about 7 May 2023. Used on a
// question (recall's temporal_range, resolved against the caller's clock), on an event's
// content (resolved against the event's own timestamp, so context shows absolute dates) and by
// the facts job (a fact's valid_from / valid_to, jobs/facts.hpp).
//
// Recognised (case-insensitive, whole words; docs/RECALL.md "Time expressions" lists every
// rule with its label):
//   day         yesterday, today, tonight, tomorrow, last night, this morning/afternoon/evening
//   weekday     last/this past/next <weekday> (the nearest one strictly before/after the
//               reference day); "on <weekday>" alone is not resolved (past or future is unsaid)
//   week        last week, this week, next week, last weekend, this weekend, next weekend
//   month/year  last/this/next month, last/this/next year
//   season      summer 2021, the summer of 2022, in/during/over the summer, last/this/next
//               summer (spring, fall/autumn, winter: northern meteorological seasons)
//   ago         N days/weeks/months/years ago (N: digits, a, an, one..twelve, a couple of,
//               a few = 3)
//   anchored    the day/week/weekend/<weekday> before/after <day>, N days/weeks/months/years
//               before/after/prior to <day>, last/next <unit> on/before/as of <day>: counted
//               from that day instead of the reference
//   absolute    "7 May 2023", "May 7, 2023", "7th of May 2023", "May 2023", "in 2022" (a bare
//               year 1900-2099 after in/since/during/of/from); a day without a year ("July
//               12", "the 12th of July") and the month names alone ("in May") in the
//               reference year, or a following dated day's ("August 11 and August 15, 2021")
//   month part  early/mid/late <month>, the beginning/middle/end of, the first/second half
//               of, the first..fourth/last week of <month> [year]
// Ranges are half-open [from_us, to_us) in UTC days (reflectd stores UTC; the events'
// timestamps carry the speakers' dates).
//
// Thread-safety: pure functions. Errors: none; text that matches no rule yields nothing.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace reflectd::text {

/// A resolved span of time.
struct TimeRange {
  std::int64_t from_us = 0;  ///< First µs (UTC) of the range.
  std::int64_t to_us = 0;    ///< One past the last µs (half-open).
  /// How a reader is told the date, in LoCoMo's style: "7 May 2023", "the week before
  /// 8 May 2023", "April 2023", "2022".
  std::string label;
};

/// One expression found in a text.
struct TimeMention {
  std::size_t begin = 0;  ///< Byte offset of its first character.
  std::size_t end = 0;    ///< Byte offset one past its last character.
  std::string phrase;     ///< The text as written.
  TimeRange range;
  bool relative = false;  ///< True when it depended on the reference time (not "May 2023").
};

/// Every expression of `text`, in text order, none overlapping, resolved against
/// `reference_us` (µs since the epoch, UTC: the event's timestamp or the caller's now).
std::vector<TimeMention> find_time_expressions(std::string_view text, std::int64_t reference_us);

/// `text` with each relative expression followed by its absolute date in brackets:
/// "yesterday [7 May 2023]". Absolute expressions are left as written.
std::string with_absolute_dates(std::string_view text, std::int64_t reference_us);

/// "7 May 2023" for the UTC day of `us`.
std::string format_day(std::int64_t us);

/// The smallest range covering every mention (empty `label` and from=to=0 when none).
TimeRange covering_range(const std::vector<TimeMention>& mentions);

}  // namespace reflectd::text
