// Howard Hinnant's date library (Debian's libhowardhinnant-date-dev), included once here.
//
// date.h trips g++ 12's -Wmaybe-uninitialized inside its own parser (clang, used by the fuzz
// preset, has no such warning and rejects the unknown group), so the warning is silenced
// around the include only.

#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <date/date.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
