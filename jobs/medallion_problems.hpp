#pragma once
// The open problems of a scope (jobs/medallion.hpp), which the medallion lists among its open
// questions. Thread-safety: uses only the connection passed in; throws SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "jobs/medallion.hpp"

namespace reflectd::jobs::medallion {

/// A problem raised and not solved since, or a question asked and not answered.
struct OpenProblem {
  std::string source;            ///< the problem pattern's, trajectory's or question's id
  std::string text;              ///< the problem as stated (empty for a question: see `question`)
  std::string target;            ///< its area of work; empty when none
  std::string ids;               ///< JSON array of its event ids
  std::int64_t ts_us = 0;        ///< when raised (its newest occurrence), µs
  std::int64_t occurrences = 0;  ///< occurrences of the same signature among those read
  std::string question;          ///< as listed, when not "How to solve <text>?"
};

/// The scope's open problems, newest first (a stable sort by time over the three kinds in
/// this order):
/// - an error event or a "Problem:"/"Issue:" paragraph of an event that is not itself a change
///   (not a commit, no "Solution:"), with no later successful outcome of its trajectory or on
///   its target and no later active decision on its target; one per problem signature (its
///   newest occurrence, counting the others), from the newest 500 occurrences;
/// - a trajectory that ended without success, with no later success on its target (newest
///   100), stated by its task;
/// - a question asked and not answered (consolidation keeps the newest per trajectory; newest
///   100).
/// Records whose target is outside the scope's graph nodes are left out.
std::vector<OpenProblem> unsolved_problems(SQLite::Database& db, const MedallionScope& scope);

}  // namespace reflectd::jobs::medallion
