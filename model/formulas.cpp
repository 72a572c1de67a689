#include "model/formulas.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

namespace reflectd::model {
namespace {

double clamp01(double x) { return std::isnan(x) ? 0.0 : std::clamp(x, 0.0, 1.0); }

}  // namespace

std::optional<Curve> parse_curve(std::string_view text) {
  if (text == "exponential") return Curve::kExponential;
  if (text == "linear") return Curve::kLinear;
  if (text == "custom") return Curve::kCustom;
  return std::nullopt;
}

std::optional<DeletionPolicy> parse_deletion_policy(std::string_view text) {
  if (text == "auto_prune") return DeletionPolicy::kAutoPrune;
  if (text == "manual_only") return DeletionPolicy::kManualOnly;
  if (text == "never") return DeletionPolicy::kNever;
  return std::nullopt;
}

const char* to_string(Curve curve) {
  switch (curve) {
    case Curve::kExponential: return "exponential";
    case Curve::kLinear: return "linear";
    case Curve::kCustom: return "custom";
  }
  return "exponential";
}

const char* to_string(DeletionPolicy policy) {
  switch (policy) {
    case DeletionPolicy::kAutoPrune: return "auto_prune";
    case DeletionPolicy::kManualOnly: return "manual_only";
    case DeletionPolicy::kNever: return "never";
  }
  return "manual_only";
}

std::optional<double> salience_at(double base, std::int64_t ref_us, std::int64_t created_us,
                                  const DecayProfile& profile, std::int64_t now_us) {
  if (profile.half_life_s < 1) return std::nullopt;
  const double floor = profile.min_salience;
  if (profile.pinned) return base;
  if (now_us - ref_us <= 0) return base;
  if (profile.max_age_s > 0 && static_cast<double>(now_us - created_us) >=
                                   static_cast<double>(profile.max_age_s) * kUsPerSecond) {
    return 0.0;
  }
  const double dt_s = static_cast<double>(now_us - ref_us) / kUsPerSecond;
  const auto h = static_cast<double>(profile.half_life_s);
  double s = 0;
  if (profile.curve == Curve::kLinear) {
    s = base * (1.0 - dt_s / (2.0 * h));
  } else {
    // "custom" curves are evaluated as exponential: the seed defines no custom formula.
    s = base * std::exp2(-dt_s / h);
  }
  if (!std::isfinite(s)) return floor;
  return std::max(floor, s);
}

double reinforce(double salience, double gain) { return std::min(1.0, salience + gain); }

std::optional<double> penalize(double salience, double amount, double floor) {
  if (!std::isfinite(amount) || amount < 0) return std::nullopt;
  return std::max(floor, salience - amount);
}

std::optional<std::int64_t> archive_at_us(double base, std::int64_t ref_us, std::int64_t created_us,
                                          const DecayProfile& profile) {
  if (profile.pinned || profile.deletion_policy != DeletionPolicy::kAutoPrune ||
      profile.max_age_s <= 0 || profile.min_salience <= 0 || profile.half_life_s < 1) {
    return std::nullopt;
  }
  const double h_us = static_cast<double>(profile.half_life_s) * kUsPerSecond;
  auto below_floor_us = static_cast<double>(ref_us);
  if (base > profile.min_salience) {
    below_floor_us += profile.curve == Curve::kLinear
                          ? 2.0 * h_us * (1.0 - profile.min_salience / base)
                          : h_us * std::log2(base / profile.min_salience);
  }
  const double old_enough_us =
      static_cast<double>(created_us) + static_cast<double>(profile.max_age_s) * kUsPerSecond;
  return static_cast<std::int64_t>(std::ceil(std::max(below_floor_us, old_enough_us)));
}

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::kPattern: return "pattern";
    case Phase::kEmergent: return "emergent";
    case Phase::kCanonical: return "canonical";
  }
  return "pattern";
}

const char* to_string(Vitality vitality) {
  switch (vitality) {
    case Vitality::kActive: return "active";
    case Vitality::kDecaying: return "decaying";
    case Vitality::kDormant: return "dormant";
  }
  return "active";
}

const char* to_string(Scope scope) {
  switch (scope) {
    case Scope::kLocal: return "local";
    case Scope::kSystem: return "system";
    case Scope::kInfra: return "infra";
  }
  return "local";
}

std::optional<Phase> parse_phase(std::string_view text) {
  if (text == "pattern") return Phase::kPattern;
  if (text == "emergent") return Phase::kEmergent;
  if (text == "canonical") return Phase::kCanonical;
  return std::nullopt;
}

std::optional<Scope> parse_scope(std::string_view text) {
  if (text == "local") return Scope::kLocal;
  if (text == "system") return Scope::kSystem;
  if (text == "infra") return Scope::kInfra;
  return std::nullopt;
}

Vitality vitality_at(std::int64_t last_activity_us, std::int64_t now_us, const VitalityParams& p) {
  const double days = static_cast<double>(now_us - last_activity_us) / kUsPerDay;
  if (days < p.decaying_after_days) return Vitality::kActive;
  if (days <= p.dormant_after_days) return Vitality::kDecaying;
  return Vitality::kDormant;
}

double decayed_confidence(double base, std::int64_t last_activity_us, std::int64_t now_us,
                          const VitalityParams& p) {
  const double days = static_cast<double>(now_us - last_activity_us) / kUsPerDay;
  if (days < p.decaying_after_days) return clamp01(base);
  const double decaying_days = std::min(days, p.dormant_after_days) - p.decaying_after_days;
  double loss = p.decaying_loss_per_week * decaying_days / 7.0;
  if (days > p.dormant_after_days) {
    loss += p.dormant_loss_per_week * (days - p.dormant_after_days) / 7.0;
  }
  return clamp01(std::max(base - loss, base * p.min_confidence_share));
}

void EvidenceSums::add(std::int64_t t, std::optional<std::int64_t> before,
                       std::optional<std::int64_t> after) {
  auto square = [](std::int64_t gap) { return static_cast<GapSquares>(gap) * gap; };
  if (count == 0) {
    first_us = last_us = t;
  } else if (before && after) {
    // Remove first, then add: the sum stays within [0, L²] at every step.
    gap_squares -= square(*after - *before);
    gap_squares += square(t - *before) + square(*after - t);
  } else if (before) {
    gap_squares += square(t - *before);
    last_us = t;
  } else {
    gap_squares += square(*after - t);
    first_us = t;
  }
  ++count;
}

EvidenceSums EvidenceSums::of(std::span<const std::int64_t> sorted_us) {
  EvidenceSums sums;
  for (std::size_t i = 0; i < sorted_us.size(); ++i) {
    sums.add(sorted_us[i], i == 0 ? std::nullopt : std::optional(sorted_us[i - 1]), std::nullopt);
  }
  return sums;
}

double gap_variance_days2(const EvidenceSums& sums) {
  if (sums.count < 3) return 0.0;
  __extension__ using Unsigned = unsigned __int128;
  const auto n = static_cast<Unsigned>(sums.count - 1);
  const auto lifetime = static_cast<Unsigned>(sums.last_us - sums.first_us);
  const auto squares = static_cast<Unsigned>(sums.gap_squares);
  const double n2_days2 = static_cast<double>(sums.count - 1) *
                          static_cast<double>(sums.count - 1) * (kUsPerDay * kUsPerDay);
  Unsigned scaled = 0;
  if (!__builtin_mul_overflow(n, squares, &scaled)) {
    const Unsigned l2 = lifetime * lifetime;  // < 2^126
    return scaled > l2 ? static_cast<double>(scaled - l2) / n2_days2 : 0.0;
  }
  const auto ln = static_cast<long double>(sums.count - 1);
  const long double mean = static_cast<long double>(lifetime) / ln;
  const long double variance = static_cast<long double>(squares) / ln - mean * mean;
  return variance > 0
             ? static_cast<double>(variance / (static_cast<long double>(kUsPerDay) * kUsPerDay))
             : 0.0;
}

double stability(const EvidenceSums& sums) {
  if (sums.count < 2) return 0.0;
  if (sums.count == 2) return 0.3;
  const double lifetime = static_cast<double>(sums.last_us - sums.first_us) / kUsPerDay;
  const double regularity =
      std::max(0.0, 1.0 - gap_variance_days2(sums) / (std::max(lifetime, 0.01) + 1.0));
  return regularity * (0.5 + 0.5 * std::min(1.0, lifetime / 7.0));
}

double stability(std::span<const std::int64_t> evidence_us) {
  return stability(EvidenceSums::of(evidence_us));
}

double confidence(std::int64_t evidence_count, double stability_score, std::int64_t hits) {
  const auto e = static_cast<double>(evidence_count);
  return clamp01(0.4 * std::min(1.0, std::log10(e + 1.0) / 2.0) + 0.4 * stability_score +
                 0.2 * std::min(1.0, std::log(1.0 + static_cast<double>(hits)) / 2.3));
}

double removal_cost(Phase phase, Scope scope, double stability_score, std::int64_t evidence_count) {
  const double base = phase == Phase::kCanonical ? 0.9 : phase == Phase::kEmergent ? 0.6 : 0.2;
  const double scope_bonus = scope == Scope::kInfra ? 0.1 : scope == Scope::kSystem ? 0.05 : 0.0;
  return std::min(1.0,
                  base + 0.1 * stability_score +
                      std::min(0.2, 0.05 * std::log10(static_cast<double>(evidence_count) + 1.0)) +
                      scope_bonus);
}

double utility(double stability_score, std::int64_t evidence_count, const StreamUse& use,
               std::int64_t last_seen_us, std::int64_t now_us) {
  const std::int64_t reference = use.last_hit_us > 0 ? use.last_hit_us : last_seen_us;
  const double days = static_cast<double>(now_us - reference) / kUsPerDay;
  const double penalty = days > 7.0 ? std::min(0.3, (days - 7.0) / 30.0) : 0.0;
  return clamp01(0.5 * stability_score +
                 std::min(0.1, 0.02 * std::log10(static_cast<double>(evidence_count) + 1.0)) +
                 std::min(0.4, std::log(1.0 + static_cast<double>(use.hit_count)) / 10.0) -
                 penalty);
}

StreamMetrics compute_metrics(const EvidenceSums& sums, const StreamUse& use, Phase phase,
                              Scope scope, std::int64_t now_us, const MetricParams& params) {
  StreamMetrics m;
  if (sums.count == 0) return m;
  const std::int64_t e = sums.count;
  m.frequency = e;
  m.lifetime_days = static_cast<double>(sums.last_us - sums.first_us) / kUsPerDay;
  m.coverage = std::min(1.0, m.lifetime_days / params.window_days);
  m.reinforcement_density = static_cast<double>(e) / std::max(m.lifetime_days, 0.01);
  m.stability = stability(sums);
  m.confidence = confidence(e, m.stability, use.hit_count);
  m.removal_cost = removal_cost(phase, scope, m.stability, e);
  m.utility = utility(m.stability, e, use, sums.last_us, now_us);
  return m;
}

StreamMetrics compute_metrics(std::span<const std::int64_t> evidence_us, const StreamUse& use,
                              Phase phase, Scope scope, std::int64_t now_us,
                              const MetricParams& params) {
  return compute_metrics(EvidenceSums::of(evidence_us), use, phase, scope, now_us, params);
}

Phase next_phase(Phase phase, const StreamMetrics& m, Vitality vitality, Scope scope) {
  if (phase == Phase::kPattern && (m.frequency >= 3 || m.confidence >= 0.5) &&
      (m.lifetime_days > 0.5 || m.frequency >= 5)) {
    phase = Phase::kEmergent;
  }
  if (phase == Phase::kEmergent && m.coverage > 0.3 && m.stability > 0.6 &&
      removal_cost(Phase::kEmergent, scope, m.stability, m.frequency) > 0.5 &&
      vitality == Vitality::kActive) {
    phase = Phase::kCanonical;
  }
  return phase;
}

double acceptance_score(const StreamMetrics& m) { return 0.6 * m.confidence + 0.4 * m.stability; }

namespace {

// Text scanners for problem_signature() (its rewrites, in its order) and
// conventional_commit_scope(). Each rewrite equals one std::regex_replace of the ECMAScript
// pattern in its comment (leftmost, non-overlapping matches; "C" locale classes: \s = space,
// \t, \n, \v, \f, \r; \w = [A-Za-z0-9_]); tests/model/formulas_test.cpp compares them with the
// regexes on the real streams and on random text. Scanned by hand: the regexes were ~17% of
// the consolidate job at 1M events.

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool is_word(char c) { return is_letter(c) || is_digit(c) || c == '_'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// \x1b\[[0-9;]*[A-Za-z] -> "" (the two classes are disjoint: no backtracking to consider).
std::string drop_ansi_escapes(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    if (in[i] == '\x1b' && i + 1 < in.size() && in[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < in.size() && (is_digit(in[j]) || in[j] == ';')) ++j;
      if (j < in.size() && is_letter(in[j])) {
        i = j + 1;
        continue;
      }
    }
    out += in[i++];
  }
  return out;
}

// "[^"]*"|'[^']*'|`[^`]*` -> <q> (an unclosed quote matches nothing at its position).
std::string replace_quoted(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    const char c = in[i];
    if (c == '"' || c == '\'' || c == '`') {
      if (const auto close = in.find(c, i + 1); close != std::string::npos) {
        out += "<q>";
        i = close + 1;
        continue;
      }
    }
    out += in[i++];
  }
  return out;
}

// \S*/\S* -> <path>: the leftmost match starts where a run of non-space bytes starts and
// covers the whole run, when the run holds a '/'.
std::string replace_paths(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    if (is_space(in[i])) {
      out += in[i++];
      continue;
    }
    std::size_t end = i;
    bool slash = false;
    while (end < in.size() && !is_space(in[end])) slash |= in[end++] == '/';
    if (slash) {
      out += "<path>";
    } else {
      out.append(in, i, end - i);
    }
    i = end;
  }
  return out;
}

// 0x[0-9a-fA-F]+|\b[0-9a-fA-F]{7,}\b -> <hex>. At each position the first alternative wins;
// the second needs a word boundary before it, and its greedy run of hex digits must end at
// one too (backing off inside the run cannot reach a boundary: hex digits are word bytes).
std::string replace_hex(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    if (in[i] == '0' && i + 2 < in.size() && (in[i + 1] == 'x') && is_hex(in[i + 2])) {
      std::size_t end = i + 2;
      while (end < in.size() && is_hex(in[end])) ++end;
      out += "<hex>";
      i = end;
      continue;
    }
    if (is_hex(in[i]) && (i == 0 || !is_word(in[i - 1]))) {
      std::size_t end = i;
      while (end < in.size() && is_hex(in[end])) ++end;
      if (end - i >= 7 && (end == in.size() || !is_word(in[end]))) {
        out += "<hex>";
        i = end;
        continue;
      }
    }
    out += in[i++];
  }
  return out;
}

// \d+ -> <n>
std::string replace_numbers(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    if (is_digit(in[i])) {
      while (i < in.size() && is_digit(in[i])) ++i;
      out += "<n>";
    } else {
      out += in[i++];
    }
  }
  return out;
}

// [^\w<> ]+ -> " ", then \s+ -> " ": every other byte (other whitespace, punctuation, bytes of
// UTF-8 sequences) becomes a space, and runs of spaces one space.
std::string fold_punctuation(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    const char c = in[i];
    if (is_word(c) || c == '<' || c == '>') {
      out += c;
      ++i;
      continue;
    }
    while (i < in.size() && !(is_word(in[i]) || in[i] == '<' || in[i] == '>')) ++i;
    if (out.empty() || out.back() != ' ') out += ' ';
  }
  return out;
}

}  // namespace

std::string problem_signature(std::string_view text) {
  // Pick the line that names the problem.
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
  line = drop_ansi_escapes(line);
  line = replace_quoted(line);
  line = replace_paths(line);
  line = replace_hex(line);
  line = replace_numbers(line);
  for (char& c : line) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  line = fold_punctuation(line);
  const auto first = line.find_first_not_of(' ');
  if (first == std::string::npos) return {};
  line = line.substr(first, line.find_last_not_of(' ') - first + 1);
  if (line.size() > 200) line.resize(200);
  return line;
}

std::string_view conventional_commit_scope(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && is_letter(line[i])) ++i;
  if (i == 0 || i == line.size() || line[i] != '(') return {};
  const std::size_t open = i + 1;
  // The class excludes ')', so the run ends at the first ')' or space: no other split exists.
  std::size_t close = open;
  while (close < line.size() && line[close] != ')' && !is_space(line[close])) ++close;
  if (close == line.size() || line[close] != ')') return {};
  if (close == open || close - open > 64) return {};
  std::size_t colon = close + 1;
  if (colon < line.size() && line[colon] == '!') ++colon;
  if (colon == line.size() || line[colon] != ':') return {};
  return line.substr(open, close - open);
}

}  // namespace reflectd::model
