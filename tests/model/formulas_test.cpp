// The anchors' replayable cases (ANCHORS §1-2) and the closed-form promise: exact values.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/utf8.hpp"
#include "model/formulas.hpp"

using namespace reflectd::model;

namespace {
constexpr std::int64_t kSecond = 1'000'000;
constexpr std::int64_t kSecondsPerHour = 3600;
constexpr std::int64_t kDay = 86'400 * kSecond;
constexpr std::int64_t kT0 = 1'700'000'000 * kSecond;

DecayProfile membrane(double floor) {
  DecayProfile p;
  p.half_life_s = 3600;
  p.min_salience = floor;
  return p;
}
}  // namespace

TEST_CASE("Membrane decay cases") {
  CHECK(*salience_at(0.8, kT0, kT0, membrane(0.2), kT0 + 3600 * kSecond) == 0.4);
  CHECK(*salience_at(0.3, kT0, kT0, membrane(0.2), kT0 + 36000 * kSecond) == 0.2);  // floor
  DecayProfile zero = membrane(0.2);
  zero.half_life_s = 0;
  CHECK_FALSE(salience_at(0.8, kT0, kT0, zero, kT0 + kSecond));  // half-life 0 is invalid
  CHECK(reinforce(0.95, 0.2) == 1.0);                            // cap
  CHECK(*penalize(0.8, 0.25, 0.1) == Approx(0.55).epsilon(1e-15));
  CHECK_FALSE(penalize(0.8, -0.1, 0.1));
  CHECK_FALSE(penalize(0.8, std::nan(""), 0.1));
  CHECK_FALSE(penalize(0.8, INFINITY, 0.1));
  CHECK(*salience_at(0.8, kT0 + 100 * kSecond, kT0, membrane(0.2), kT0) == 0.8);  // future ref
  DecayProfile pinned = membrane(0.2);
  pinned.pinned = true;
  CHECK(*salience_at(0.8, kT0, kT0, pinned, kT0 + 365 * kDay) == 0.8);
  DecayProfile aged = membrane(0.2);
  aged.max_age_s = 7200;
  CHECK(*salience_at(0.8, kT0, kT0, aged, kT0 + 7200 * kSecond) == 0.0);
  CHECK(*salience_at(1e308, kT0, kT0, membrane(0.2), kT0 + kSecond) > 0);
}

TEST_CASE("linear decay halves at one half-life and never drops under the floor") {
  DecayProfile linear = membrane(0.1);
  linear.curve = Curve::kLinear;
  CHECK(*salience_at(0.8, kT0, kT0, linear, kT0 + 3600 * kSecond) == 0.4);
  CHECK(*salience_at(0.8, kT0, kT0, linear, kT0 + 7200 * kSecond) == 0.1);
}

TEST_CASE("sweeps never compound: many evaluations equal one") {
  // The anchors' bug: an hourly sweep that decays the already-decayed value. The closed form
  // depends only on (base, ref, profile, now), so any sweep schedule gives the same value.
  const DecayProfile p = membrane(0.01);
  double hourly = 0;
  for (int hour = 1; hour <= 48; ++hour) {
    hourly = *salience_at(1.0, kT0, kT0, p, kT0 + hour * kSecondsPerHour * kSecond);
  }
  CHECK(hourly == *salience_at(1.0, kT0, kT0, p, kT0 + 48 * kSecondsPerHour * kSecond));
  CHECK(hourly == std::max(0.01, std::exp2(-48.0)));
}

TEST_CASE("archive time: below the floor and past max age, auto_prune only") {
  DecayProfile p = membrane(0.125);
  p.max_age_s = 3600;
  // 1.0 -> 0.125 takes 3 half-lives; max age 1 h: the later is 3 h.
  CHECK(*archive_at_us(1.0, kT0, kT0, p) == kT0 + 3 * kSecondsPerHour * kSecond);
  p.max_age_s = 5 * kSecondsPerHour;
  CHECK(*archive_at_us(1.0, kT0, kT0, p) == kT0 + 5 * kSecondsPerHour * kSecond);
  p.deletion_policy = DeletionPolicy::kManualOnly;
  CHECK_FALSE(archive_at_us(1.0, kT0, kT0, p));
  p.deletion_policy = DeletionPolicy::kNever;
  CHECK_FALSE(archive_at_us(1.0, kT0, kT0, p));
  p.deletion_policy = DeletionPolicy::kAutoPrune;
  p.pinned = true;
  CHECK_FALSE(archive_at_us(1.0, kT0, kT0, p));
}

TEST_CASE("vitality and confidence decay from the confidence at the last evidence") {
  const VitalityParams v;
  CHECK(vitality_at(kT0, kT0 + 6 * kDay, v) == Vitality::kActive);
  CHECK(vitality_at(kT0, kT0 + 7 * kDay, v) == Vitality::kDecaying);
  CHECK(vitality_at(kT0, kT0 + 30 * kDay, v) == Vitality::kDecaying);
  CHECK(vitality_at(kT0, kT0 + 31 * kDay, v) == Vitality::kDormant);
  CHECK(decayed_confidence(0.8, kT0, kT0 + 6 * kDay, v) == 0.8);
  CHECK(decayed_confidence(0.8, kT0, kT0 + 14 * kDay, v) == Approx(0.75).epsilon(1e-12));
  // 23 decaying days (0.05 * 23/7) then 7 dormant days (0.2).
  CHECK(decayed_confidence(0.8, kT0, kT0 + 37 * kDay, v) ==
        Approx(0.8 - 0.05 * 23.0 / 7.0 - 0.2).epsilon(1e-12));
  CHECK(decayed_confidence(0.8, kT0, kT0 + 400 * kDay, v) == 0.0);
  // With a floor (decay.min_confidence_share) a year of silence leaves 0.8 x 0.8; the loss before
  // it is the seed's.
  VitalityParams floored = v;
  floored.min_confidence_share = 0.8;
  CHECK(decayed_confidence(0.8, kT0, kT0 + 400 * kDay, floored) == Approx(0.64).epsilon(1e-12));
  CHECK(decayed_confidence(0.8, kT0, kT0 + 14 * kDay, floored) == Approx(0.75).epsilon(1e-12));
  // Non-compounding: evaluating every day changes nothing about day 60's value.
  double daily = 0;
  for (int day = 0; day <= 60; ++day) daily = decayed_confidence(0.9, kT0, kT0 + day * kDay, v);
  CHECK(daily == decayed_confidence(0.9, kT0, kT0 + 60 * kDay, v));
}

TEST_CASE("evidence sums are exact and the same in any order of arrival") {
  // Gaps 1, 2, 3 days: n = 3, L = 6 days, Σgap² = 14 days², var = (3·14 - 36) / 9 = 2/3.
  const std::vector<std::int64_t> dates{kT0, kT0 + kDay, kT0 + 3 * kDay, kT0 + 6 * kDay};
  const EvidenceSums sorted = EvidenceSums::of(dates);
  CHECK(sorted.count == 4);
  CHECK(sorted.first_us == kT0);
  CHECK(sorted.last_us == kT0 + 6 * kDay);
  CHECK(sorted.gap_squares == static_cast<GapSquares>(14) * kDay * kDay);
  CHECK(gap_variance_days2(sorted) == Approx(2.0 / 3.0).epsilon(1e-15));
  CHECK(gap_variance_days2(EvidenceSums::of(std::vector<std::int64_t>{kT0, kT0 + kDay})) == 0.0);

  // 2,000 times (with ties) added in a random order, each between its current neighbours,
  // give the sums of the sorted list exactly.
  std::mt19937_64 random(7);
  std::vector<std::int64_t> times;
  times.reserve(2000);
  for (int i = 0; i < 2000; ++i)
    times.push_back(kT0 + static_cast<std::int64_t>(random() % (400 * kDay)) / 1000 * 1000);
  std::multiset<std::int64_t> seen;
  EvidenceSums sums;
  for (const std::int64_t t : times) {
    const auto after = seen.lower_bound(t);
    std::optional<std::int64_t> before_t;
    std::optional<std::int64_t> after_t;
    if (after != seen.begin()) before_t = *std::prev(after);
    if (after != seen.end()) after_t = *after;
    sums.add(t, before_t, after_t);
    seen.insert(t);
  }
  std::sort(times.begin(), times.end());
  const EvidenceSums expected = EvidenceSums::of(times);
  CHECK(sums.count == expected.count);
  CHECK(sums.first_us == expected.first_us);
  CHECK(sums.last_us == expected.last_us);
  CHECK(sums.gap_squares == expected.gap_squares);
  CHECK(stability(sums) == stability(times));
}

TEST_CASE("stream metrics by hand") {
  // Evidence on days 0, 1, 3, 6: gaps 1, 2, 3 (mean 2, population variance 2/3), L = 6.
  const std::vector<std::int64_t> dates{kT0, kT0 + kDay, kT0 + 3 * kDay, kT0 + 6 * kDay};
  const double s = (1.0 - (2.0 / 3.0) / 7.0) * (0.5 + 0.5 * 6.0 / 7.0);
  CHECK(stability(dates) == Approx(s).epsilon(1e-12));
  CHECK(stability(std::vector<std::int64_t>{kT0, kT0 + kDay}) == 0.3);
  CHECK(stability(std::vector<std::int64_t>{kT0}) == 0.0);
  const StreamUse use{2, kT0 + 6 * kDay};
  const auto m = compute_metrics(dates, use, Phase::kPattern, Scope::kLocal, kT0 + 6 * kDay, {});
  CHECK(m.frequency == 4);
  CHECK(m.lifetime_days == 6.0);
  CHECK(m.coverage == Approx(0.2).epsilon(1e-12));
  CHECK(m.reinforcement_density == Approx(4.0 / 6.0).epsilon(1e-12));
  const double c = 0.4 * std::log10(5.0) / 2.0 + 0.4 * s + 0.2 * std::log(3.0) / 2.3;
  CHECK(m.confidence == Approx(c).epsilon(1e-12));
  CHECK(m.removal_cost == Approx(0.2 + 0.1 * s + 0.05 * std::log10(5.0)).epsilon(1e-12));
  CHECK(m.utility ==
        Approx(0.5 * s + 0.02 * std::log10(5.0) + std::log(3.0) / 10.0).epsilon(1e-12));
  // A hit 17 days ago costs min(0.3, (17 - 7) / 30) = 0.3.
  CHECK(utility(s, 4, {2, kT0}, kT0, kT0 + 17 * kDay) ==
        Approx(0.5 * s + 0.02 * std::log10(5.0) + std::log(3.0) / 10.0 - 0.3).epsilon(1e-12));
  CHECK(removal_cost(Phase::kCanonical, Scope::kInfra, 1.0, 1000000) == 1.0);
}

TEST_CASE("phase transitions (seed 000)") {
  StreamMetrics m;
  m.frequency = 3;
  m.lifetime_days = 0.4;
  CHECK(next_phase(Phase::kPattern, m, Vitality::kActive, Scope::kLocal) == Phase::kPattern);
  m.lifetime_days = 0.6;
  CHECK(next_phase(Phase::kPattern, m, Vitality::kActive, Scope::kLocal) == Phase::kEmergent);
  m.frequency = 2;
  m.confidence = 0.5;
  CHECK(next_phase(Phase::kPattern, m, Vitality::kActive, Scope::kLocal) == Phase::kEmergent);
  m.confidence = 0.49;
  CHECK(next_phase(Phase::kPattern, m, Vitality::kActive, Scope::kLocal) == Phase::kPattern);
  m.frequency = 5;
  m.lifetime_days = 0;
  CHECK(next_phase(Phase::kPattern, m, Vitality::kActive, Scope::kLocal) == Phase::kEmergent);
  // EMERGENT -> CANONICAL needs coverage, stability, removal cost and an ACTIVE vitality.
  m.frequency = 40;
  m.lifetime_days = 20;
  m.coverage = 0.31;
  m.stability = 0.61;
  CHECK(next_phase(Phase::kEmergent, m, Vitality::kActive, Scope::kLocal) == Phase::kCanonical);
  CHECK(next_phase(Phase::kPattern, m, Vitality::kActive, Scope::kLocal) == Phase::kCanonical);
  CHECK(next_phase(Phase::kEmergent, m, Vitality::kDecaying, Scope::kLocal) == Phase::kEmergent);
  m.coverage = 0.3;
  CHECK(next_phase(Phase::kEmergent, m, Vitality::kActive, Scope::kLocal) == Phase::kEmergent);
  m.coverage = 0.31;
  m.stability = 0.6;
  CHECK(next_phase(Phase::kEmergent, m, Vitality::kActive, Scope::kLocal) == Phase::kEmergent);
  // Phases never demote.
  CHECK(next_phase(Phase::kCanonical, StreamMetrics{}, Vitality::kDormant, Scope::kLocal) ==
        Phase::kCanonical);
}

TEST_CASE("problem signatures fold what varies") {
  CHECK(problem_signature("Problem: tests fail on build 1234 in src/foo.cpp\nSolution: fix") ==
        "problem tests fail on build <n> in <path>");
  CHECK(problem_signature("Error at 0xdeadbeef: 'x.txt' not found") ==
        "error at <hex> <q> not found");
  CHECK(problem_signature("Traceback (most recent call last):\n  File \"a.py\", line 3\n"
                          "ValueError: invalid literal 42\n") == "valueerror invalid literal <n>");
  CHECK(problem_signature("\x1b[33mwarning\x1b[0m: thing") == "warning thing");
  CHECK(problem_signature("  \n ").empty());
}

namespace {

// problem_signature() as it was written first, with std::regex: the reference its hand-written
// scanners must equal byte for byte.
std::string signature_by_regex(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start <= text.size();) {
    const auto end = std::min(text.find('\n', start), text.size());
    auto line = text.substr(start, end - start);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
      line.remove_suffix(1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front())))
      line.remove_prefix(1);
    if (!line.empty()) lines.push_back(line);
    start = end + 1;
  }
  if (lines.empty()) return {};
  std::string line(text.find("Traceback (most recent call last)") != std::string_view::npos
                       ? lines.back()
                       : lines.front());
  if (line.size() > 2000) line.resize(2000);
  static const std::regex kAnsi("\x1b\\[[0-9;]*[A-Za-z]");
  static const std::regex kQuoted(R"("[^"]*"|'[^']*'|`[^`]*`)");
  static const std::regex kPath(R"(\S*/\S*)");
  static const std::regex kHex(R"(0x[0-9a-fA-F]+|\b[0-9a-fA-F]{7,}\b)");
  static const std::regex kNumber(R"(\d+)");
  static const std::regex kPunctuation(R"([^\w<> ]+)");
  static const std::regex kSpaces(R"(\s+)");
  line = std::regex_replace(line, kAnsi, "");
  line = std::regex_replace(line, kQuoted, "<q>");
  line = std::regex_replace(line, kPath, "<path>");
  line = std::regex_replace(line, kHex, "<hex>");
  line = std::regex_replace(line, kNumber, "<n>");
  for (char& c : line) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  line = std::regex_replace(line, kPunctuation, " ");
  line = std::regex_replace(line, kSpaces, " ");
  const auto first = line.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  line = line.substr(first, line.find_last_not_of(' ') - first + 1);
  if (line.size() > 200) line.resize(200);
  return line;
}

}  // namespace

TEST_CASE("problem signatures equal the regex rewrites on the real streams and random text") {
  std::size_t texts = 0;
  std::size_t changed = 0;
  for (const char* file : {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"}) {
    std::ifstream in(std::string(REFLECTD_DATA_DIR) + "/" + file);
    REQUIRE(in);
    for (std::string wire; std::getline(in, wire);) {
      const std::string content = nlohmann::json::parse(wire).value("content", "");
      // The whole text, and each line alone (so the first-line rule does not hide the rest).
      std::vector<std::string> cases{content};
      for (std::size_t start = 0; start < content.size();) {
        const auto end = std::min(content.find('\n', start), content.size());
        cases.push_back(content.substr(start, end - start));
        start = end + 1;
      }
      for (const auto& text : cases) {
        INFO(text);
        const std::string expected = signature_by_regex(text);
        REQUIRE(problem_signature(text) == expected);
        ++texts;
        changed += expected.find('<') != std::string::npos ? 1 : 0;
      }
    }
  }
  CHECK(texts > 40000);
  CHECK(changed > 1000);  // the rewrites were exercised, not only lower-casing
  // Text built from the bytes the patterns care about (fixed seed: the same texts each run).
  const std::string alphabet =
      std::string("\x1b[;09aAfFgGxX_ \t\r\v\f\n\"'`/.,:-<>()") + "\xc3\xa9" + std::string(1, '\0');
  std::mt19937 random(11);
  for (int n = 0; n < 100000; ++n) {
    std::string text;
    const auto length = std::uniform_int_distribution<std::size_t>(0, 60)(random);
    for (std::size_t i = 0; i < length; ++i) {
      text += alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(random)];
    }
    INFO(nlohmann::json(text).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
    REQUIRE(problem_signature(text) == signature_by_regex(text));
  }
}

TEST_CASE("conventional_commit_scope equals its regex on the real streams and random lines") {
  const std::regex scope(R"(^[A-Za-z]+\(([^)\s]{1,64})\)!?:)");
  auto by_regex = [&](const std::string& line) {
    std::smatch match;
    return std::regex_search(line, match, scope) ? match[1].str() : std::string();
  };
  CHECK(conventional_commit_scope("fix(socket)!: close on EINTR") == "socket");
  CHECK(conventional_commit_scope("feat(a.b/c-d): x") == "a.b/c-d");
  CHECK(conventional_commit_scope("fix(): x").empty());
  CHECK(conventional_commit_scope("fix(a b): x").empty());
  CHECK(conventional_commit_scope("fix(a)!!: x").empty());
  CHECK(conventional_commit_scope(" fix(a): x").empty());
  CHECK(conventional_commit_scope("fix(" + std::string(64, 's') + "):") == std::string(64, 's'));
  CHECK(conventional_commit_scope("fix(" + std::string(65, 's') + "):").empty());
  std::size_t lines = 0;
  std::size_t scopes = 0;
  for (const char* file : {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"}) {
    std::ifstream stream(std::string(REFLECTD_DATA_DIR) + "/" + file);
    REQUIRE(stream);
    for (std::string wire; std::getline(stream, wire);) {
      const std::string content = nlohmann::json::parse(wire).value("content", "");
      std::istringstream in(content);
      for (std::string line; std::getline(in, line);) {
        INFO(line);
        const std::string expected = by_regex(line);
        REQUIRE(std::string(conventional_commit_scope(line)) == expected);
        ++lines;
        scopes += expected.empty() ? 0 : 1;
      }
    }
  }
  CHECK(lines > 30000);
  CHECK(scopes >= 1);  // libzmq's history hardly uses the convention
  // Lines built from the bytes that matter to the pattern (fixed seed: the same lines each run).
  const std::string alphabet = std::string("aZ()!: \t\r\n\v\f-./") + "\xc3\xa9" + '\0';
  std::mt19937 random(7);
  std::size_t matched = 0;
  for (int n = 0; n < 200000; ++n) {
    std::string line = n % 2 == 0 ? "fix(" : "";
    const auto length = std::uniform_int_distribution<std::size_t>(0, 80)(random);
    for (std::size_t i = 0; i < length; ++i) {
      line += alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(random)];
    }
    INFO(nlohmann::json(line).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    const std::string expected = by_regex(line);
    REQUIRE(std::string(conventional_commit_scope(line)) == expected);
    matched += expected.empty() ? 0 : 1;
  }
  CHECK(matched > 300);
}

// Every place that shortens text cuts with utf8_boundary (common/utf8.hpp): "é" is C3 A9,
// "€" E2 82 AC, "𝄞" F0 9D 84 9E.
TEST_CASE("UTF-8 cuts never split a code point and keep every whole one") {
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E";  // a é € 𝄞, 10 bytes
  const std::vector<std::size_t> expected{0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10, 10};
  for (std::size_t pos = 0; pos < expected.size(); ++pos) {
    INFO("pos " << pos);
    CHECK(reflectd::utf8_boundary(text, pos) == expected[pos]);
  }
  CHECK(reflectd::utf8_prefix(text, 5) == "a\xC3\xA9");
  CHECK(reflectd::utf8_prefix(text, 99) == text);
  CHECK(reflectd::utf8_prefix("\x80\x80\x80", 2).empty());  // invalid: nothing whole to keep
}
