#include "jobs/medallion_questions.hpp"

#include <algorithm>

#include "common/timestamp.hpp"
#include "jobs/follow_ups.hpp"
#include "jobs/medallion_problems.hpp"
#include "jobs/medallion_text.hpp"

namespace reflectd::jobs {

const char* question_priority(std::int64_t support, double days_since_seen) {
  if (support >= 10 && days_since_seen <= 30) return "high";
  if (support < 3 || days_since_seen > 365) return "low";
  return "medium";
}

namespace medallion {
namespace {

using nlohmann::json;

// nlohmann::json's destructor may allocate (it flattens nested values to avoid deep
// recursion); a bad_alloc there ends the process, as it would anywhere else.
struct Question {  // NOLINT(bugprone-exception-escape)
  std::string source, text, priority;
  json blocked_on;
  const std::string* ids;  // the stream's or problem's, parsed only for the listed ten
  std::int64_t support;
};

double days_between(std::int64_t from_us, std::int64_t to_us) {
  return static_cast<double>(to_us - from_us) / static_cast<double>(kUsPerDay);
}

// Proposals awaiting a verdict and assumptions in force.
void stream_questions(const std::vector<Stream>& streams, std::int64_t now_us,
                      std::vector<Question>& questions) {
  for (const auto& st : streams) {
    if (st.kind == "proposal" && st.status == "draft" && st.provenance == "external") {
      questions.push_back({st.id, "Accept or reject the proposal: " + clip(st.title, 200) + "?",
                           question_priority(st.frequency, days_between(st.last_seen, now_us)),
                           st.target.empty() ? json::array() : json::array({st.target}),
                           &st.evidence, st.frequency});
    } else if (st.kind == "assumption" && st.status == "active") {
      questions.push_back({st.id, "Does the assumption hold: " + clip(st.title, 200) + "?",
                           question_priority(st.frequency, days_between(st.last_seen, now_us)),
                           json::array({st.target}), &st.evidence, st.frequency});
    }
  }
}

// Problems raised and not solved since (medallion_problems.hpp).
void problem_questions(const std::vector<OpenProblem>& open_problems, std::int64_t now_us,
                       std::vector<Question>& questions) {
  for (const auto& problem : open_problems) {
    questions.push_back(
        {problem.source,
         !problem.question.empty()
             ? problem.question
             : "How to solve \"" + clip(problem.text, 160) + "\"? Raised " + day(problem.ts_us) +
                   (problem.occurrences > 1 ? " (" + std::to_string(problem.occurrences) + " times)"
                                            : std::string()) +
                   ", no success " + (problem.target.empty() ? "" : "on " + problem.target + " ") +
                   "since.",
         question_priority(problem.occurrences, days_between(problem.ts_us, now_us)),
         problem.target.empty() ? json::array() : json::array({problem.target}), &problem.ids,
         problem.occurrences});
  }
}

// A change reverted and not redone: no later commit (other than a revert) speaks of it
// (jobs/follow_ups.hpp); the newest three reverts are read.
void reverted_questions(SQLite::Database& db, const MedallionScope& scope,
                        const std::vector<Stream>& streams, std::int64_t newest_event_us,
                        std::vector<Question>& questions) {
  std::vector<const Stream*> reverted;
  for (const auto& st : streams) {
    if (st.kind == "decision" && st.status == "falsified") reverted.push_back(&st);
  }
  std::stable_sort(reverted.begin(), reverted.end(), [](const Stream* a, const Stream* b) {
    return a->last_seen != b->last_seen ? a->last_seen > b->last_seen : a->id < b->id;
  });
  if (reverted.size() > 3 || scope.ns.empty()) reverted.resize(scope.ns.empty() ? 0 : 3);
  std::vector<Said> said;
  said.reserve(reverted.size());
  for (const Stream* st : reverted) said.push_back({st->title, st->last_seen + 1});
  text::Tokenizer tokenizer;
  Topics topics(tokenizer, {});
  const std::vector<bool> redone =
      taken_up(db, scope.ns, {"commit", "commit_change"}, said, newest_event_us,
               {"Revert", "revert", "Back out", "Backout"}, topics, kMaxFollowUpTurns);
  for (std::size_t i = 0; i < reverted.size(); ++i) {
    if (redone[i]) continue;
    const Stream& st = *reverted[i];
    questions.push_back({st.id,
                         "Reverted on " + day(st.last_seen) + " and not redone since: \"" +
                             clip(st.title, 160) + "\". Another way, or dropped?",
                         "low", st.target.empty() ? json::array() : json::array({st.target}),
                         &st.evidence, 1});
  }
}

// A conversation's open threads: plans whose day came with nothing said of them since.
// `thread_ids` holds the evidence the questions point to.
void thread_questions(SQLite::Database& db, const MedallionScope& scope,
                      const std::vector<Person>& people, std::int64_t newest_event_us,
                      std::vector<std::string>& thread_ids, std::vector<Question>& questions) {
  const std::vector<OpenThread> threads = open_threads(db, scope.ns, people, newest_event_us, 3);
  thread_ids.reserve(threads.size());  // Question::ids points into it
  for (const OpenThread& t : threads) {
    thread_ids.push_back(json::array({t.source_seq}).dump());
    const bool recent = newest_event_us - t.plan.valid_from_us <= 30 * kDayUs;
    questions.push_back({"fact:" + std::to_string(t.plan.fact_id),
                         "Follow up with " + t.person + ": \"" + clip(t.plan.statement, 160) +
                             "\" (told " + day(t.told_us) + ", for " + day(t.plan.valid_from_us) +
                             "; nothing said of it since)",
                         recent ? "medium" : "low", json::array(), &thread_ids.back(), 1});
  }
}

}  // namespace

QuestionItems question_items(SQLite::Database& db, const std::string& medallion_id,
                             const MedallionScope& scope, const std::vector<Stream>& streams,
                             const std::vector<Person>& people, std::int64_t newest_event_us,
                             std::int64_t now_us, std::size_t max_items) {
  std::vector<Question> questions;
  stream_questions(streams, now_us, questions);
  const std::vector<OpenProblem> open_problems = unsolved_problems(db, scope);
  problem_questions(open_problems, now_us, questions);
  reverted_questions(db, scope, streams, newest_event_us, questions);
  std::vector<std::string> thread_ids;
  thread_questions(db, scope, people, newest_event_us, thread_ids, questions);
  auto rank = [](const std::string& priority) {
    return priority == "high" ? 0 : priority == "medium" ? 1 : 2;
  };
  std::stable_sort(questions.begin(), questions.end(), [&](const Question& a, const Question& b) {
    if (rank(a.priority) != rank(b.priority)) return rank(a.priority) < rank(b.priority);
    if (a.support != b.support) return a.support > b.support;
    return a.source < b.source;
  });
  if (questions.size() > max_items) questions.resize(max_items);
  QuestionItems out;
  for (const auto& q : questions) {
    out.items.push_back(
        {{"id", item_id(db, medallion_id, "Q", q.source)},
         {"question", q.text},
         {"blocked_on", q.blocked_on},
         {"priority", q.priority},
         {"x_reflectd", {{"source_id", q.source}, {"evidence_event_ids", last_ids(*q.ids, 10)}}}});
  }
  if (!questions.empty()) out.first = questions.front().text;
  return out;
}

}  // namespace medallion
}  // namespace reflectd::jobs
