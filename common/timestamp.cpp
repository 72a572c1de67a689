#include "common/timestamp.hpp"

// date.h trips g++ 12's -Wmaybe-uninitialized inside its own parser (clang, used by the
// fuzz preset, has no such warning and rejects the unknown group).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <date/date.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <sstream>

namespace reflectd {

std::optional<std::int64_t> parse_rfc3339_us(std::string_view text) {
  // RFC 3339 §5.6: date "T" time, with "Z" or a numeric offset; 't'/'z' are allowed too.
  if (text.size() < 20 || text.size() > 64) return std::nullopt;
  std::string normalised(text);
  if (normalised[10] == 't' || normalised[10] == ' ') normalised[10] = 'T';
  const bool zulu = normalised.back() == 'Z' || normalised.back() == 'z';
  if (zulu) normalised.back() = 'Z';
  std::istringstream in(normalised);
  date::sys_time<std::chrono::microseconds> tp;
  std::chrono::minutes offset{0};
  if (zulu) {
    in >> date::parse("%FT%TZ", tp);
  } else {
    in >> date::parse("%FT%T%Ez", tp, offset);
  }
  if (in.fail() || in.peek() != std::char_traits<char>::eof()) return std::nullopt;
  // RFC 3339 requires two-digit fields: date::parse is lenient about widths, so re-check.
  const bool shape_ok = normalised[4] == '-' && normalised[7] == '-' && normalised[13] == ':' &&
                        normalised[16] == ':';
  if (!shape_ok) return std::nullopt;
  const auto year = date::year_month_day(date::floor<date::days>(tp)).year();
  if (year < date::year{1} || year > date::year{9999}) return std::nullopt;
  // Parsing into sys_time with %Ez already subtracts the offset: tp is UTC.
  return tp.time_since_epoch().count();
}

std::string format_rfc3339_us(std::int64_t us) {
  const date::sys_time<std::chrono::microseconds> tp{std::chrono::microseconds{us}};
  return date::format("%FT%TZ", tp);
}

}  // namespace reflectd
