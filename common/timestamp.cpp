#include "common/timestamp.hpp"

#include <cstdint>
#include <sstream>

#include "common/date.hpp"

namespace reflectd {
namespace {

bool digits(std::string_view text, std::size_t at, std::size_t count) {
  if (at + count > text.size()) return false;
  for (std::size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return true;
}

// RFC 3339 §5.6 date-time, character by character: YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM).
// date::parse is lenient about widths and signs, and on some malformed fields ("04:0\xc3-07:00",
// "17:-9223372036854775809:27") it converts a NaN to an integer duration (undefined behaviour,
// found by fuzz/event_decoder_fuzz.cpp), so it only ever sees text of this exact shape.
bool rfc3339_shape(std::string_view t) {
  if (!(digits(t, 0, 4) && t[4] == '-' && digits(t, 5, 2) && t[7] == '-' && digits(t, 8, 2) &&
        t[10] == 'T' && digits(t, 11, 2) && t[13] == ':' && digits(t, 14, 2) && t[16] == ':' &&
        digits(t, 17, 2))) {
    return false;
  }
  std::size_t i = 19;
  if (i < t.size() && t[i] == '.') {
    const std::size_t first = ++i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == first) return false;
  }
  if (i + 1 == t.size() && t[i] == 'Z') return true;
  return i + 6 == t.size() && (t[i] == '+' || t[i] == '-') && digits(t, i + 1, 2) &&
         t[i + 3] == ':' && digits(t, i + 4, 2);
}

// The digits of t[at, at + count), which rfc3339_shape() has checked.
std::int64_t number(std::string_view t, std::size_t at, std::size_t count) {
  std::int64_t value = 0;
  for (std::size_t i = at; i < at + count; ++i) value = value * 10 + (t[i] - '0');
  return value;
}

// Text of rfc3339_shape() whose fields all lie in their ordinary ranges (a valid calendar
// date, hours 00-23, minutes and seconds 00-59, at most 6 fraction digits, an offset of at
// most 23:59), read field by field: date::parse through an istringstream costs about 8,000
// instructions a call, 0.5-0.8 µs of every event the decoder reads. Leap seconds, longer
// fractions and out-of-range fields give nullopt and are left to date::parse, so that what
// it accepts or refuses stays its decision; the calendar arithmetic is the date library's.
std::optional<date::sys_time<std::chrono::microseconds>> read_fields(std::string_view t) {
  const date::year_month_day ymd{date::year{static_cast<int>(number(t, 0, 4))},
                                 date::month{static_cast<unsigned>(number(t, 5, 2))},
                                 date::day{static_cast<unsigned>(number(t, 8, 2))}};
  const std::int64_t hours = number(t, 11, 2);
  const std::int64_t minutes = number(t, 14, 2);
  const std::int64_t seconds = number(t, 17, 2);
  if (!ymd.ok() || hours > 23 || minutes > 59 || seconds > 59) return std::nullopt;
  std::size_t i = 19;
  std::int64_t fraction_us = 0;
  if (t[i] == '.') {
    const std::size_t first = ++i;
    while (t[i] >= '0' && t[i] <= '9') ++i;  // the shape check saw an offset after them
    const std::size_t count = i - first;
    if (count > 6) return std::nullopt;
    fraction_us = number(t, first, count);
    for (std::size_t k = count; k < 6; ++k) fraction_us *= 10;
  }
  std::chrono::minutes offset{0};
  if (t[i] != 'Z') {
    const std::int64_t offset_hours = number(t, i + 1, 2);
    const std::int64_t offset_minutes = number(t, i + 4, 2);
    if (offset_hours > 23 || offset_minutes > 59) return std::nullopt;
    offset = std::chrono::minutes{offset_hours * 60 + offset_minutes};
    if (t[i] == '-') offset = -offset;
  }
  // Local time minus its offset is UTC, as date::parse's %Ez gives it.
  return date::sys_days{ymd} + std::chrono::hours{hours} + std::chrono::minutes{minutes} +
         std::chrono::seconds{seconds} + std::chrono::microseconds{fraction_us} - offset;
}

}  // namespace

std::optional<std::int64_t> parse_rfc3339_us(std::string_view text) {
  // RFC 3339 §5.6: date "T" time, with "Z" or a numeric offset; 't'/'z' are allowed too.
  if (text.size() < 20 || text.size() > 64) return std::nullopt;
  std::string normalised(text);
  if (normalised[10] == 't' || normalised[10] == ' ') normalised[10] = 'T';
  const bool zulu = normalised.back() == 'Z' || normalised.back() == 'z';
  if (zulu) normalised.back() = 'Z';
  if (!rfc3339_shape(normalised)) return std::nullopt;
  date::sys_time<std::chrono::microseconds> tp;
  if (const auto read = read_fields(normalised)) {
    tp = *read;
  } else {
    std::istringstream in(normalised);
    std::chrono::minutes offset{0};
    if (zulu) {
      in >> date::parse("%FT%TZ", tp);
    } else {
      in >> date::parse("%FT%T%Ez", tp, offset);
    }
    if (in.fail() || in.peek() != std::char_traits<char>::eof()) return std::nullopt;
  }
  const auto year = date::year_month_day(date::floor<date::days>(tp)).year();
  if (year < date::year{1} || year > date::year{9999}) return std::nullopt;
  // Parsing into sys_time with %Ez already subtracts the offset: tp is UTC.
  return tp.time_since_epoch().count();
}

std::string format_rfc3339_us(std::int64_t us) {
  const date::sys_time<std::chrono::microseconds> tp{std::chrono::microseconds{us}};
  const auto day = date::floor<date::days>(tp);
  const date::year_month_day ymd{day};
  // date::format writes through an ostringstream (12,000 instructions a call, 0.9% of an
  // incremental cycle's entity summaries); the fields are the same, so years of four digits
  // are printed here and the rest (signs, longer years) left to it.
  if (ymd.year() < date::year{0} || ymd.year() > date::year{9999}) {
    return date::format("%FT%TZ", tp);
  }
  const date::hh_mm_ss<std::chrono::microseconds> time{tp - day};
  // Fixed-width fields written digit by digit: snprintf parsed its format at every call
  // (~5,000 instructions).
  std::string text(27, '\0');
  std::size_t at = 0;
  auto put = [&text, &at](std::uint64_t value, std::size_t width, char after) {
    for (std::size_t i = width; i-- > 0; value /= 10)
      text[at + i] = static_cast<char>('0' + value % 10);
    at += width;
    if (after != '\0') text[at++] = after;
  };
  put(static_cast<std::uint64_t>(static_cast<int>(ymd.year())), 4, '-');
  put(static_cast<unsigned>(ymd.month()), 2, '-');
  put(static_cast<unsigned>(ymd.day()), 2, 'T');
  put(static_cast<std::uint64_t>(time.hours().count()), 2, ':');
  put(static_cast<std::uint64_t>(time.minutes().count()), 2, ':');
  put(static_cast<std::uint64_t>(time.seconds().count()), 2, '.');
  put(static_cast<std::uint64_t>(time.subseconds().count()), 6, 'Z');
  return text;
}

}  // namespace reflectd
