#pragma once
// Timestamps of wire format v1: RFC 3339 with an offset, or epoch milliseconds.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace reflectd {

/// One day in µs (86,400 s), the unit of the day-granular windows and offsets.
inline constexpr std::int64_t kDayUs = 86'400'000'000;

/// Parses an RFC 3339 date-time with a mandatory offset ("2009-07-29T12:07:54+02:00",
/// "2024-12-01T09:00:00.123456Z"); fractions beyond microseconds are truncated.
/// Returns µs since the Unix epoch (UTC), or nullopt when the text is not RFC 3339 or lies
/// outside years 0001-9999 (in UTC). Fields in their ordinary ranges are read directly; the
/// rest (leap seconds, fractions beyond 6 digits, out-of-range fields) is parsed by Howard
/// Hinnant's date library, whose calendar arithmetic both use. Thread-safe.
std::optional<std::int64_t> parse_rfc3339_us(std::string_view text);

/// Formats µs since the epoch as RFC 3339 UTC with microseconds ("...T09:00:00.000000Z").
std::string format_rfc3339_us(std::int64_t us);

}  // namespace reflectd
