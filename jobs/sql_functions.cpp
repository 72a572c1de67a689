#include "jobs/sql_functions.hpp"

#include <sqlite3.h>

#include <string>

namespace reflectd::jobs {
namespace {

std::string text_arg(sqlite3_value* value) {
  const auto* text = sqlite3_value_text(value);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text));
}

void rd_salience(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  DecayProfile profile;
  profile.curve = parse_curve(text_arg(argv[3])).value_or(Curve::kExponential);
  profile.half_life_s = sqlite3_value_int64(argv[4]);
  profile.min_salience = sqlite3_value_double(argv[5]);
  profile.max_age_s = sqlite3_value_int64(argv[6]);
  profile.pinned = sqlite3_value_int(argv[7]) != 0;
  const auto s = salience_at(sqlite3_value_double(argv[0]), sqlite3_value_int64(argv[1]),
                             sqlite3_value_int64(argv[2]), profile, sqlite3_value_int64(argv[8]));
  if (s) {
    sqlite3_result_double(ctx, *s);
  } else {
    sqlite3_result_null(ctx);
  }
}

void rd_vitality(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const auto* params = static_cast<const VitalityParams*>(sqlite3_user_data(ctx));
  sqlite3_result_text(
      ctx,
      to_string(vitality_at(sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[1]), *params)),
      -1, SQLITE_STATIC);
}

void rd_confidence(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const auto* params = static_cast<const VitalityParams*>(sqlite3_user_data(ctx));
  sqlite3_result_double(
      ctx, decayed_confidence(sqlite3_value_double(argv[0]), sqlite3_value_int64(argv[1]),
                              sqlite3_value_int64(argv[2]), *params));
}

void check(SQLite::Database& db, int rc, const char* name) {
  if (rc != SQLITE_OK) {
    throw SQLite::Exception(std::string("cannot register ") + name + ": " +
                            sqlite3_errmsg(db.getHandle()));
  }
}

}  // namespace

void register_sql_functions(SQLite::Database& db, const VitalityParams& params) {
  constexpr int kFlags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  auto* handle = db.getHandle();
  void* user = const_cast<VitalityParams*>(&params);  // NOLINT: SQLite's API takes void*.
  check(db,
        sqlite3_create_function_v2(handle, "rd_salience", 9, kFlags, nullptr, rd_salience, nullptr,
                                   nullptr, nullptr),
        "rd_salience");
  check(db,
        sqlite3_create_function_v2(handle, "rd_vitality", 2, kFlags, user, rd_vitality, nullptr,
                                   nullptr, nullptr),
        "rd_vitality");
  check(db,
        sqlite3_create_function_v2(handle, "rd_confidence", 3, kFlags, user, rd_confidence, nullptr,
                                   nullptr, nullptr),
        "rd_confidence");
}

}  // namespace reflectd::jobs
