#pragma once
// Every number the reflection jobs write comes from the pure functions in this file, so each
// can be recomputed by hand. Times are µs since the Unix epoch (UTC); "days" are 86,400 s.
// Nothing here reads a clock: callers pass `now_us`, which is why sweeps never compound.
//
// Sources: salience decay, reinforcement and penalties follow Membrane (seed 002, ANCHORS §2);
// stream metrics, confidence, removal cost, utility, phases and vitality follow LedgerMind
// (seed 000, ANCHORS §1). Where the seeds are silent the choice is documented here.
// Thread-safety: all functions are pure and thread-safe.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace reflectd::model {

inline constexpr double kUsPerDay = 86'400'000'000.0;
inline constexpr double kUsPerSecond = 1'000'000.0;

// ---------------------------------------------------------------- salience (seed 002)

enum class Curve { kExponential, kLinear, kCustom };
enum class DeletionPolicy { kAutoPrune, kManualOnly, kNever };

/// A seed 002 DecayProfile plus the Lifecycle's pinned and deletion_policy.
struct DecayProfile {
  Curve curve = Curve::kExponential;
  std::int64_t half_life_s = 3600;  ///< >= 1.
  double min_salience = 0.0;        ///< The floor.
  std::int64_t max_age_s = 0;       ///< 0 = no maximum age.
  double reinforcement_gain = 0.1;
  bool pinned = false;
  DeletionPolicy deletion_policy = DeletionPolicy::kAutoPrune;
};

std::optional<Curve> parse_curve(std::string_view text);
std::optional<DeletionPolicy> parse_deletion_policy(std::string_view text);
const char* to_string(Curve curve);
const char* to_string(DeletionPolicy policy);

/// Salience at `now_us` of a record whose salience was `base` at `ref_us` (its last
/// reinforcement) and that was created at `created_us`. Closed form, so evaluating it once or
/// after any number of sweeps gives the same value:
///   pinned                     -> base
///   now - ref <= 0 (future ref) -> base
///   max_age_s > 0 and age >= max_age -> 0
///   exponential (and custom)   -> max(floor, base * 2^(-dt / half_life))
///   linear                     -> max(floor, base * (1 - dt / (2 * half_life)))
/// A NaN or infinite result clamps to the floor. half_life_s < 1 is invalid: returns nullopt.
std::optional<double> salience_at(double base, std::int64_t ref_us, std::int64_t created_us,
                                  const DecayProfile& profile, std::int64_t now_us);

/// Reinforcement (seed 002): min(1, salience + gain).
double reinforce(double salience, double gain);

/// Penalty (seed 002): max(floor, salience - amount); nullopt when `amount` is not a finite
/// number >= 0.
std::optional<double> penalize(double salience, double amount, double floor);

/// When a record becomes eligible for archiving: its undecayed curve has fallen below the
/// floor (exponential: ref + h * log2(base / floor); linear: ref + 2h * (1 - floor / base))
/// and it is older than max_age_s, i.e. the later of the two. nullopt when it never is: pinned,
/// deletion policy other than auto_prune, max_age_s = 0, or floor <= 0.
std::optional<std::int64_t> archive_at_us(double base, std::int64_t ref_us, std::int64_t created_us,
                                          const DecayProfile& profile);

// ---------------------------------------------------------------- knowledge (seed 000)

enum class Phase { kPattern, kEmergent, kCanonical };
enum class Vitality { kActive, kDecaying, kDormant };
enum class Scope { kLocal, kSystem, kInfra };

const char* to_string(Phase phase);
const char* to_string(Vitality vitality);
const char* to_string(Scope scope);
std::optional<Phase> parse_phase(std::string_view text);
std::optional<Scope> parse_scope(std::string_view text);

/// Thresholds of vitality and confidence decay (config `decay.*`; seed 000 defaults).
struct VitalityParams {
  double decaying_after_days = 7;
  double dormant_after_days = 30;
  double decaying_loss_per_week = 0.05;
  double dormant_loss_per_week = 0.2;
  /// The share of its confidence at the last evidence that knowledge keeps however long it
  /// goes unused (ours: time alone, with nothing superseding or contradicting a
  /// decision, does not take it to nothing). 0 is the seed's unbounded loss.
  double min_confidence_share = 0.0;
};

/// ACTIVE below 7 days since the last evidence or use, DECAYING up to 30, DORMANT beyond.
Vitality vitality_at(std::int64_t last_activity_us, std::int64_t now_us, const VitalityParams& p);

/// Confidence after decay, from the confidence at the last evidence (`base`): no loss while
/// ACTIVE; 0.05 per week of DECAYING time (counted from day 7); 0.2 per week of DORMANT time
/// (from day 30) on top of the 23 DECAYING days; never below base x min_confidence_share;
/// clamped to [0, 1]. Closed form: never compounds.
double decayed_confidence(double base, std::int64_t last_activity_us, std::int64_t now_us,
                          const VitalityParams& p);

/// Inputs that are not evidence dates.
struct StreamUse {
  std::int64_t hit_count = 0;
  std::int64_t last_hit_us = 0;  ///< 0 = never used.
};

struct MetricParams {
  double window_days = 30;  ///< W.
};

/// The metrics of a stream from its evidence dates (ANCHORS §1), for the evidence count E =
/// evidence_us.size() (after the update: the lesson of LedgerMind's stale count).
struct StreamMetrics {
  std::int64_t frequency = 0;        ///< Number of evidence dates.
  double lifetime_days = 0;          ///< last - first.
  double coverage = 0;               ///< min(1, lifetime / W).
  double reinforcement_density = 0;  ///< frequency / max(lifetime, 0.01).
  double stability = 0;              ///< See stability().
  double confidence = 0;             ///< See confidence().
  double removal_cost = 0;           ///< See removal_cost().
  double utility = 0;                ///< See utility().
};

/// Exact running sums over a stream's evidence times t_1 <= ... <= t_E (µs), enough for every
/// metric: E, t_1, t_E and the sum of the squared gaps Σ(t_{i+1} - t_i)² in µs², kept in a
/// 128-bit integer (it is at most (t_E - t_1)² < 2^126, so it never overflows). The sum of the
/// gaps is t_E - t_1. Kept exactly, these sums are the same however the evidence was added
/// (in any order, in any number of steps), so every metric derived from them is too.
__extension__ using GapSquares = __int128;
struct EvidenceSums {
  std::int64_t count = 0;      ///< E.
  std::int64_t first_us = 0;   ///< t_1 (meaningless when count = 0).
  std::int64_t last_us = 0;    ///< t_E.
  GapSquares gap_squares = 0;  ///< Σ gap², µs².

  /// Adds one time t whose neighbours in the sorted evidence are `before` (the largest
  /// t_i <= t already present; nullopt: none) and `after` (the smallest t_i >= t after it;
  /// nullopt: none). A gap b - a becomes (t - a) + (b - t). O(1).
  void add(std::int64_t t, std::optional<std::int64_t> before, std::optional<std::int64_t> after);
  /// The sums of a sorted list of times (tests, and streams without stored sums).
  static EvidenceSums of(std::span<const std::int64_t> sorted_us);
};

/// Population variance of the E - 1 gaps, in days², from the exact sums: with n = E - 1 and
/// L = t_E - t_1 (µs), var = (n·Σgap² - L²) / (n² · 86,400,000,000²). The numerator is
/// computed exactly in 128-bit integers (it is >= 0 by Cauchy-Schwarz); the one conversion to
/// double is that quotient. Only when n·Σgap² exceeds 2^128 (centuries of evidence) it falls
/// back to long double arithmetic, still a function of the sums alone. 0 when E < 3.
double gap_variance_days2(const EvidenceSums& sums);

/// > 2 dates: max(0, 1 - var(gaps in days) / (max(L, 0.01) + 1)) * (0.5 + 0.5 * min(1, L / 7)),
/// with the population variance of gap_variance_days2(); exactly 2: 0.3; fewer: 0.
double stability(const EvidenceSums& sums);
/// The same for a sorted list of times.
double stability(std::span<const std::int64_t> evidence_us);

/// 0.4 * min(1, log10(E + 1) / 2) + 0.4 * S + 0.2 * min(1, ln(1 + hits) / 2.3).
double confidence(std::int64_t evidence_count, double stability, std::int64_t hits);

/// min(1, base + 0.1 * S + min(0.2, 0.05 * log10(E + 1)) + scope bonus), base PATTERN 0.2,
/// EMERGENT 0.6, CANONICAL 0.9; scope bonus (ours: the seed only says wider scopes cost more
/// to remove) LOCAL 0, SYSTEM 0.05, INFRA 0.1.
double removal_cost(Phase phase, Scope scope, double stability, std::int64_t evidence_count);

/// clamp01(0.5 * S + min(0.1, 0.02 * log10(E + 1)) + min(0.4, ln(1 + hits) / 10) - p), with
/// p = min(0.3, (d - 7) / 30) when d > 7, d = days since the last hit (since the last evidence
/// when never hit; ours: the seed leaves unused streams undefined).
double utility(double stability, std::int64_t evidence_count, const StreamUse& use,
               std::int64_t last_seen_us, std::int64_t now_us);

/// All metrics at once from the exact sums (count > 0). O(1).
StreamMetrics compute_metrics(const EvidenceSums& sums, const StreamUse& use, Phase phase,
                              Scope scope, std::int64_t now_us, const MetricParams& params);
/// The same for a sorted, non-empty list of evidence times.
StreamMetrics compute_metrics(std::span<const std::int64_t> evidence_us, const StreamUse& use,
                              Phase phase, Scope scope, std::int64_t now_us,
                              const MetricParams& params);

/// Seed 000 transitions, applied until none fires (a stream may move two phases at once):
/// PATTERN -> EMERGENT when (frequency >= 3 or confidence >= 0.5) and (lifetime > 0.5 days or
/// frequency >= 5); EMERGENT -> CANONICAL when coverage > 0.3 and stability > 0.6 and
/// removal_cost (recomputed for EMERGENT) > 0.5 and vitality is ACTIVE. Phases never demote.
Phase next_phase(Phase phase, const StreamMetrics& m, Vitality vitality, Scope scope);

/// Acceptance score of a proposal (ours: the seed leaves acceptance to a human or callback):
/// 0.6 * confidence + 0.4 * stability; a proposal is accepted when it is past PATTERN and the
/// score reaches decay.accept_threshold.
double acceptance_score(const StreamMetrics& m);

// ---------------------------------------------------------------- recurring problems

/// Signature of an error or problem text: the exception line of a traceback (its last
/// non-empty line), else the first non-empty line; ANSI escapes dropped; quoted values,
/// paths, hex and numbers replaced by <q>, <path>, <hex>, <n>; punctuation folded to spaces;
/// lower case; at most 200 bytes. Empty when nothing is left.
std::string problem_signature(std::string_view text);

/// The scope of a Conventional Commits 1.0 header ("fix(socket)!: ..." -> "socket"): when
/// `line` starts with one or more ASCII letters, "(", 1 to 64 bytes that are neither ")" nor
/// ASCII whitespace (space, \t, \n, \v, \f, \r), ")", an optional "!" and ":", the bytes
/// between the parentheses (a view into `line`); else empty. The same as std::regex
/// `^[A-Za-z]+\(([^)\s]{1,64})\)!?:` (tests/model/formulas_test.cpp compares the two), scanned by
/// hand because the regex cost ~5% of the consolidate job. Pure.
std::string_view conventional_commit_scope(std::string_view line);

}  // namespace reflectd::model
