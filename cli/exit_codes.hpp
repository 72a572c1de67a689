#pragma once
// reflectctl's exit statuses, shared by every command so scripts can rely on them.

namespace reflectd::cli {

inline constexpr int kExitOk = 0;           ///< Everything stored or duplicate / request answered.
inline constexpr int kExitFailed = 1;       ///< Something rejected, unacknowledged or refused.
inline constexpr int kExitUsage = 2;        ///< Invalid command line, configuration or input file.
inline constexpr int kExitUnreachable = 3;  ///< The daemon could not be reached at all.

}  // namespace reflectd::cli
