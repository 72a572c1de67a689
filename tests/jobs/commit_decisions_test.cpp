// Decisions from commit subjects, and reverts in their common forms (jobs/commit_decisions.hpp):
// every rule on hand-made messages, with exact statements, rationales and confidences; then the
// importance that orders a medallion's decisions.

#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "jobs/commit_decisions.hpp"
#include "jobs/medallion.hpp"

namespace {

using namespace reflectd;

std::optional<jobs::ExtractedDecision> subject_decision(const std::string& message,
                                                        std::vector<std::string> files = {},
                                                        bool merge = false) {
  return jobs::decision_from_commit(message, merge, files);
}

std::string statement_of(const std::string& message) {
  const auto d = subject_decision(message);
  return d ? d->statement : "-";
}

}  // namespace

TEST_CASE("commit decisions: a subject that chooses, in its own words") {
  // Imperative, past tense, third person; a conventional-commit type and a gitmoji are read past.
  CHECK(statement_of("Use google benchmark to test latency") ==
        "Use google benchmark to test latency");
  CHECK(statement_of("Switched to std::string_view in the parser.") ==
        "Switched to std::string_view in the parser");
  CHECK(statement_of("Replace fmt::system_error with std::system_error (#3041)") ==
        "Replace fmt::system_error with std::system_error");
  CHECK(statement_of("feat(build)!: drop support for CMake 3.1") == "drop support for CMake 3.1");
  CHECK(statement_of(":recycle: Rename Buffer to Array") == "Rename Buffer to Array");
  CHECK(statement_of("Deprecate Format and update tests.") == "Deprecate Format and update tests");
  CHECK(statement_of("Require C++11") == "Require C++11");
  CHECK(statement_of("Make header-only mode the default") == "Make header-only mode the default");
  CHECK(statement_of("Bump the minimum CMake version to 3.8") ==
        "Bump the minimum CMake version to 3.8");
  CHECK(statement_of("Do not use exceptions in the core") == "Do not use exceptions in the core");
  CHECK(statement_of("Move ostream support to ostream.h") == "Move ostream support to ostream.h");
  CHECK(statement_of("Enable LTO by default") == "Enable LTO by default");
  CHECK(statement_of("Uses libstemmer for English") == "Uses libstemmer for English");

  // A verb that needs more than it got: no decision.
  CHECK(statement_of("Replace the old parser") == "-");             // replace ... with
  CHECK(statement_of("Move things around") == "-");                 // move ... to
  CHECK(statement_of("Make tests more portable") == "-");           // make ... default
  CHECK(statement_of("Remove back() and Take()") == "-");           // remove ... support
  CHECK(statement_of("Enable warnings") == "-");                    // enable ... by default
  CHECK(statement_of("Bump googletest from 1.10 to 1.11") == "-");  // a dependency's version
  // Work, not a choice; routine; too short; labels of a problem.
  CHECK(statement_of("Fix overflow in format_decimal") == "-");
  CHECK(statement_of("Add tests for chrono") == "-");
  CHECK(statement_of("Update README.md") == "-");
  CHECK(statement_of("Use consistent formatting in docs") == "-");
  CHECK(statement_of("Remove unused variable") == "-");
  CHECK(statement_of("Use") == "-");
  CHECK(statement_of("wip: use arenas") == "-");
  CHECK(statement_of("Problem: use of uninitialised memory") == "-");
  CHECK(statement_of("Merge branch 'master' into use-arenas") == "-");
  CHECK(statement_of("Revert \"Use arenas\"") == "-");
}

TEST_CASE("commit decisions: the rationale from the body, references kept, confidence") {
  auto d = subject_decision(
      "Use a stack buffer in format_to\n\nThe heap allocation showed in every profile. This "
      "avoids it because most outputs fit in 500 bytes.\n\nSigned-off-by: A <a@example.org>",
      {"include/fmt/format.h"});
  REQUIRE(d);
  CHECK(d->rationale == "This avoids it because most outputs fit in 500 bytes.");
  CHECK(d->confidence == 0.6);
  CHECK_FALSE(d->verified);

  // No reason word: the first prose paragraph; a test file touched verifies it.
  d = subject_decision("Switch to Catch2\n\nGoogle Test's macros were slow to compile.",
                       {"test/CMakeLists.txt"});
  REQUIRE(d);
  CHECK(d->rationale == "Google Test's macros were slow to compile.");
  CHECK(d->confidence == 0.8);

  // The subject's own reason clause, and its references.
  d = subject_decision("Drop the Windows XP code path to avoid dead branches (#1450)");
  REQUIRE(d);
  CHECK(d->statement == "Drop the Windows XP code path to avoid dead branches");
  CHECK(d->rationale == "to avoid dead branches (refs #1450)");

  // Nothing but the subject: no rationale, confidence 0.5.
  d = subject_decision("Migrate to mkdocs");
  REQUIRE(d);
  CHECK(d->rationale.empty());
  CHECK(d->confidence == 0.5);

  // A problem paragraph is the rationale when there is one.
  d = subject_decision("Use poll on macOS\n\nProblem: kqueue misses events on pipes.\n");
  REQUIRE(d);
  CHECK(d->rationale == "kqueue misses events on pipes.");
}

TEST_CASE("commit decisions: a pull-request merge is read by its title") {
  const auto d = subject_decision(
      "Merge pull request #412 from someone/arena\n\nSwitch to an arena allocator\n\nSo that "
      "small strings stop fragmenting the heap.",
      {}, true);
  REQUIRE(d);
  CHECK(d->statement == "Switch to an arena allocator");
  CHECK(d->rationale == "So that small strings stop fragmenting the heap. (refs #412)");
  const auto subject = jobs::read_commit_subject("Merge pull request #7 from a/b\n\nfeat: x", true);
  CHECK(subject.line == "feat: x");
  CHECK(subject.text == "x");
  CHECK(subject.refs == std::vector<std::string>{"#7"});
  CHECK(jobs::read_commit_subject("Merge branch 'dev'", true).text.empty());
  CHECK_FALSE(subject_decision("Merge branch 'use-arenas'", {}, true));
}

TEST_CASE("reverts: the quoted subject, the commit id, or the change in other words") {
  auto r = jobs::read_revert(
      "Revert \"Use arenas for strings\"\n\nThis reverts commit 3c3ae4e319d9c803bad2558d14f944ba"
      "80a0417d.\n");
  REQUIRE(r);
  CHECK(r->subject == "Use arenas for strings");
  CHECK(r->commit == "3c3ae4e319d9c803bad2558d14f944ba80a0417d");
  CHECK(r->description.empty());

  r = jobs::read_revert("Revert \"Use arenas\" (#4570)");
  REQUIRE(r);
  CHECK(r->subject == "Use arenas");
  r = jobs::read_revert("Back out \"Switch to poll\"");
  REQUIRE(r);
  CHECK(r->subject == "Switch to poll");
  r = jobs::read_revert("Backout \"Switch to poll\"");
  REQUIRE(r);
  CHECK(r->subject == "Switch to poll");

  r = jobs::read_revert("Revert commit 7CB076E, atomic ops cleanup");
  REQUIRE(r);
  CHECK(r->commit == "7cb076e");
  CHECK(r->subject.empty());
  r = jobs::read_revert("Reverting commit 1d431190f50c86f62460");
  REQUIRE(r);
  CHECK(r->commit == "1d431190f50c86f62460");

  r = jobs::read_revert("Revert the early dropping of requests for disconnected clients.");
  REQUIRE(r);
  CHECK(r->description == "the early dropping of requests for disconnected clients");
  r = jobs::read_revert("Reverted NULL checks in the API (#12)");
  REQUIRE(r);
  CHECK(r->description == "NULL checks in the API");

  // "Revert X to Y" brings Y back: the change undone is X in Y's place.
  r = jobs::read_revert("Revert std::malloc/std::free to global malloc/free (#4569) (#4570)");
  REQUIRE(r);
  CHECK(r->description == "std::malloc/std::free in place of global malloc/free");
  r = jobs::read_revert("Revert the poll check back to 2.2 behavior - let the count filter");
  REQUIRE(r);
  CHECK(r->description == "the poll check in place of 2.2 behavior");
  r = jobs::read_revert("Reverted to a simpler shutdown. This seems to reconnect the pipe");
  REQUIRE(r);
  CHECK(r->description == "replacing a simpler shutdown");
  r = jobs::read_revert("revert back to original zmq_poll");
  REQUIRE(r);
  CHECK(r->description == "replacing original zmq_poll");
  // A "to" of the change itself, or of its purpose, is no "back to".
  r = jobs::read_revert("Revert adding constexpr to rotr to satisfy C++11 compilers");
  REQUIRE(r);
  CHECK(r->description == "adding constexpr to rotr to satisfy C++11 compilers");
  r = jobs::read_revert("Revert change to VS props references");
  REQUIRE(r);
  CHECK(r->description == "change to VS props references");
  r = jobs::read_revert("Reverting 'clean' change to Makefile");
  REQUIRE(r);
  CHECK(r->description == "'clean' change to Makefile");
  r = jobs::read_revert("Reverting check to make shorter branch comes first");
  REQUIRE(r);
  CHECK(r->description == "check to make shorter branch comes first");

  // A revert of a revert brings the change back; a reference alone names nothing.
  CHECK_FALSE(
      jobs::read_revert("Revert \"Revert \"Use arenas\"\"\n\nThis reverts commit abcdef1."));
  r = jobs::read_revert("Revert #456");
  CHECK_FALSE(r);
  CHECK_FALSE(jobs::read_revert("Reverse the byte order"));
  CHECK_FALSE(jobs::read_revert("Use arenas"));
}

TEST_CASE("medallion: a decision's importance, exactly") {
  // 0.4 c + 0.2 ln(1+files)/ln 21 + 0.2 ln(1+later)/ln 51 + 0.2 min(1, days/365), 9 decimals.
  CHECK(jobs::decision_importance(0.5, 0, 0, 0) == 0.2);
  CHECK(jobs::decision_importance(1.0, 20, 50, 365) == 1.0);
  CHECK(jobs::decision_importance(1.0, 200, 5000, 4000) == 1.0);  // each part saturates
  CHECK(jobs::decision_importance(0.8, 4, 9, 182.5) ==
        Approx(0.32 + 0.2 * std::log(5.0) / std::log(21.0) + 0.2 * std::log(10.0) / std::log(51.0) +
               0.1)
            .margin(1e-9));
  // A broad, long-standing change that later work built on outranks a confident small one.
  CHECK(jobs::decision_importance(0.6, 30, 200, 900) > jobs::decision_importance(0.8, 1, 0, 10));
}
