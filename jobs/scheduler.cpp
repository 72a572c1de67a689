#include "jobs/scheduler.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/sha256.hpp"
#include "store/bound_exec.hpp"
#include "store/columns.hpp"

namespace reflectd::jobs {
namespace {

constexpr std::int64_t kUsPerS = 1'000'000;
// Upper bound on one wait of the scheduler thread; triggers also wake it early.
constexpr std::int64_t kMaxWaitUs = 1'000'000;

RunRecord read_run(SQLite::Statement& row) {
  RunRecord run;
  std::optional<std::string> result;
  store::Columns(row) >> run.run_id >> run.job >> run.ns >> run.trigger >> run.status >>
      run.started_us >> run.finished_us >> result >> run.error;
  if (result) run.result = nlohmann::json::parse(*result, nullptr, false);
  return run;
}

}  // namespace

nlohmann::json to_json(const RunRecord& run) {
  nlohmann::json out = {{"run_id", run.run_id},          {"job", run.job},
                        {"namespace", run.ns},           {"trigger", run.trigger},
                        {"status", run.status},          {"started_us", run.started_us},
                        {"finished_us", run.finished_us}};
  out["result"] = run.result.is_discarded() ? nlohmann::json() : run.result;
  if (!run.error.empty()) out["error"] = run.error;
  return out;
}

std::vector<RunRecord> recent_runs(SQLite::Database& reader, int limit, const std::string& job) {
  SQLite::Statement query(
      reader,
      "SELECT run_id, job, namespace, trigger, status, started_us, finished_us, "
      "result, error FROM job_runs WHERE ?1 = '' OR job = ?1 "
      "ORDER BY run_id DESC LIMIT ?2");
  query.bind(1, job);
  query.bind(2, limit);
  std::vector<RunRecord> runs;
  while (query.executeStep()) runs.push_back(read_run(query));
  return runs;
}

double Scheduler::jitter_fraction(const std::string& name) {
  const std::string digest = sha256_hex(name);
  return static_cast<double>(std::stoull(digest.substr(0, 8), nullptr, 16)) / 4294967296.0;
}

Scheduler::Scheduler(SQLite::Database& db, const Clock& clock, std::vector<Job> jobs,
                     Publish publish, store::WriteGate* gate)
    : db_(db),
      clock_(clock),
      publish_(std::move(publish)),
      gate_(gate),
      insert_run_(db,
                  "INSERT INTO job_runs (job, namespace, trigger, started_us, status) "
                  "VALUES (?1, ?2, ?3, ?4, 'running')"),
      finish_run_(db,
                  "UPDATE job_runs SET status = ?2, finished_us = ?3, result = ?4, error = ?5 "
                  "WHERE run_id = ?1") {
  configure_jobs_connection(db_);
  const std::int64_t now = clock_.monotonic_us();
  last_activity_us_ = now;
  for (auto& job : jobs) {
    JobState state{std::move(job), 0, {}, 0};
    state.next_interval_us = now + interval_offset(state.job);
    jobs_.push_back(std::move(state));
  }
}

Scheduler::~Scheduler() {
  try {
    stop();
  } catch (const std::exception& error) {
    // A run-done callback failed while answering demands that never ran: nothing to give
    // the error to from a destructor.
    spdlog::error("job scheduler: stopping: {}", error.what());
  }
}

std::int64_t Scheduler::interval_offset(const Job& job) const {
  return static_cast<std::int64_t>(jitter_fraction(job.name) *
                                   static_cast<double>(job.schedule.jitter_pct) / 100.0 *
                                   static_cast<double>(job.schedule.interval_s * kUsPerS));
}

int Scheduler::recover_interrupted() {
  SQLite::Statement mark(db_,
                         "UPDATE job_runs SET status = 'interrupted', finished_us = ?1, "
                         "error = 'the daemon stopped during the run' WHERE status = 'running'");
  mark.bind(1, static_cast<std::int64_t>(clock_.now_us()));
  return mark.exec();
}

void Scheduler::reconfigure(std::vector<Job> jobs) {
  {
    std::lock_guard lock(mutex_);
    const std::int64_t now = clock_.monotonic_us();
    std::vector<JobState> next;
    for (auto& job : jobs) {
      JobState state{std::move(job), 0, {}, 0};
      const auto old = std::find_if(jobs_.begin(), jobs_.end(), [&](const JobState& s) {
        return s.job.name == state.job.name;
      });
      if (old != jobs_.end()) {
        state.new_events = std::move(old->new_events);
        state.unprocessed = old->unprocessed;
      }
      state.next_interval_us = now + interval_offset(state.job);
      next.push_back(std::move(state));
    }
    jobs_ = std::move(next);
  }
  wake_.notify_all();
}

void Scheduler::events_committed(const std::string& ns, std::uint64_t count) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    last_activity_us_ = clock_.monotonic_us();
    for (auto& state : jobs_) {
      state.new_events[ns] += count;
      state.unprocessed += count;
      const auto threshold = static_cast<std::uint64_t>(state.job.schedule.after_events);
      wake = wake || (threshold > 0 && state.new_events[ns] >= threshold);
    }
  }
  if (wake) wake_.notify_all();
}

std::optional<std::string> Scheduler::request(const std::string& job, const std::string& ns,
                                              RunDone done) {
  {
    std::lock_guard lock(mutex_);
    const auto it = std::find_if(jobs_.begin(), jobs_.end(),
                                 [&](const JobState& s) { return s.job.name == job; });
    if (it == jobs_.end()) {
      std::string known;
      for (const auto& s : jobs_) known += (known.empty() ? "" : ", ") + s.job.name;
      return "unknown job '" + job + "'; known: " + known;
    }
    demands_.push_back(
        {static_cast<std::size_t>(it - jobs_.begin()), ns, "demand", std::move(done), {}});
  }
  wake_.notify_all();
  return std::nullopt;
}

void Scheduler::request_task(Job task, const std::string& ns, RunDone done) {
  {
    std::lock_guard lock(mutex_);
    demands_.push_back(
        {0, ns, "demand", std::move(done), std::make_shared<const Job>(std::move(task))});
  }
  wake_.notify_all();
}

std::optional<Scheduler::Due> Scheduler::take_due() {
  std::lock_guard lock(mutex_);
  if (!demands_.empty()) {
    Due due = std::move(demands_.front());
    demands_.pop_front();
    return due;
  }
  const std::int64_t now = clock_.monotonic_us();
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    JobState& state = jobs_[i];
    const JobSchedule& s = state.job.schedule;
    if (!s.enabled) continue;
    if (s.after_events > 0) {
      for (const auto& [ns, count] : state.new_events) {
        if (count >= static_cast<std::uint64_t>(s.after_events))
          return Due{i, ns, "events", {}, {}};
      }
    }
    if (s.idle_s > 0 && state.unprocessed > 0 && now - last_activity_us_ >= s.idle_s * kUsPerS) {
      return Due{i, "", "idle", {}, {}};
    }
    if (now >= state.next_interval_us) return Due{i, "", "interval", {}, {}};
  }
  return std::nullopt;
}

std::optional<std::int64_t> Scheduler::next_due_us() const {
  std::lock_guard lock(mutex_);
  if (!demands_.empty()) return clock_.monotonic_us();
  std::optional<std::int64_t> next;
  for (const JobState& state : jobs_) {
    if (!state.job.schedule.enabled) continue;
    std::int64_t due = state.next_interval_us;
    if (state.job.schedule.idle_s > 0 && state.unprocessed > 0) {
      due = std::min(due, last_activity_us_ + state.job.schedule.idle_s * kUsPerS);
    }
    next = next ? std::min(*next, due) : due;
  }
  return next;
}

int Scheduler::run_due() {
  int runs = 0;
  while (!stopping_) {
    auto due = take_due();
    if (!due) break;
    execute(*due);
    ++runs;
  }
  return runs;
}

namespace {

// A job turn at the write gate for one of the scheduler's own writes (a job_runs row): like a
// job's write transactions, it waits its turn instead of meeting the writer in SQLite's busy
// handler, which an indexing backlog kept busy past the busy timeout ("cannot record the run:
// database is locked" right after a bulk load of 1M events). Without a turn (no gate, or the
// daemon stopping) the write goes ahead and may meet the busy handler.
class GateTurn {
 public:
  GateTurn(store::WriteGate* gate, const std::atomic<bool>& stopping)
      : gate_(gate != nullptr && gate->job_enter([&stopping] { return stopping.load(); })
                  ? gate
                  : nullptr) {}
  ~GateTurn() {
    if (gate_ != nullptr) gate_->job_exit(false);
  }
  GateTurn(const GateTurn&) = delete;
  GateTurn& operator=(const GateTurn&) = delete;

 private:
  store::WriteGate* gate_;
};

}  // namespace

void Scheduler::execute(const Due& due) {
  Job job;
  if (due.task) {
    job = *due.task;
  } else {
    std::lock_guard lock(mutex_);
    JobState& state = jobs_[due.index];
    job = state.job;
    // The run covers everything committed so far in its scope.
    if (due.ns.empty()) {
      state.new_events.clear();
      state.unprocessed = 0;
    } else {
      state.unprocessed -= std::min(state.unprocessed, state.new_events[due.ns]);
      state.new_events.erase(due.ns);
    }
  }
  const std::int64_t started_monotonic_us = clock_.monotonic_us();
  RunRecord run;
  run.job = job.name;
  run.ns = due.ns;
  run.trigger = due.trigger;
  run.started_us = clock_.now_us();
  try {
    const GateTurn turn(gate_, stopping_);
    store::exec_bound(insert_run_, run.job, run.ns, run.trigger,
                      static_cast<std::int64_t>(run.started_us));
    run.run_id = db_.getLastInsertRowid();
  } catch (const SQLite::Exception& error) {
    insert_run_.reset();
    spdlog::error("job {}: cannot record the run: {}", job.name, error.what());
  }

  if (!job.schedule.enabled) {
    run.status = "skipped";
    run.result = {{"skipped", true},
                  {"skip_reason", "job disabled (jobs." + job.name + ".enabled)"}};
  } else {
    const CancelToken cancel(clock_, clock_.monotonic_us() + job.schedule.timeout_s * kUsPerS,
                             stopping_);
    JobContext context{db_, clock_, cancel, run.ns, run.trigger, run.run_id, publish_, gate_};
    try {
      run.result = job.run(context);
      run.status = run.result.value("skipped", false) ? "skipped" : "ok";
    } catch (const JobCancelled& cancelled) {
      run.status = cancel.stopping() ? "interrupted" : "timeout";
      run.error = cancelled.what();
    } catch (const std::exception& error) {
      run.status = "failed";
      run.error = error.what();
    }
  }
  run.finished_us = clock_.now_us();
  {
    std::lock_guard lock(tally_mutex_);
    Tally& tally = tallies_[job.name];
    ++tally.by_status[run.status];
    if (!tally.duration) tally.duration = std::make_unique<Histogram>(Histogram::job_bounds_s());
    tally.duration->observe_us(clock_.monotonic_us() - started_monotonic_us);
  }
  try {
    const GateTurn turn(gate_, stopping_);
    finish_run_.reset();
    finish_run_.bind(1, static_cast<std::int64_t>(run.run_id));
    finish_run_.bind(2, run.status);
    finish_run_.bind(3, static_cast<std::int64_t>(run.finished_us));
    finish_run_.bind(4, run.result.is_null() ? std::string("null") : run.result.dump());
    if (run.error.empty()) {
      finish_run_.bind(5);
    } else {
      finish_run_.bind(5, run.error);
    }
    finish_run_.exec();
  } catch (const SQLite::Exception& error) {
    finish_run_.reset();
    spdlog::error("job {}: cannot record the end of run {}: {}", job.name, run.run_id,
                  error.what());
  }
  if (run.status == "failed" || run.status == "timeout") {
    spdlog::warn("job {} run {} {}: {}", job.name, run.run_id, run.status, run.error);
  } else {
    spdlog::info("job {} run {} {} in {} ms", job.name, run.run_id, run.status,
                 (run.finished_us - run.started_us) / 1000);
  }
  if (!due.task) {
    std::lock_guard lock(mutex_);
    // Rescheduled when the run ends: runs never overlap, and a slow run delays the next.
    JobState& state = jobs_[due.index];
    if (state.job.name == job.name) {
      state.next_interval_us = clock_.monotonic_us() + state.job.schedule.interval_s * kUsPerS +
                               interval_offset(state.job);
    }
  }
  if (publish_) publish_("job." + job.name, to_json(run));
  if (due.done) due.done(run);
}

std::vector<JobRunTally> Scheduler::run_tallies() const {
  std::lock_guard lock(tally_mutex_);
  std::vector<JobRunTally> out;
  for (const auto& [name, tally] : tallies_) {
    out.push_back({name, tally.by_status, tally.duration->snapshot()});
  }
  return out;
}

std::vector<std::string> Scheduler::job_names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (const auto& state : jobs_) names.push_back(state.job.name);
  return names;
}

void Scheduler::start() {
  thread_ = std::thread([this] {
    while (!stopping_) {
      run_due();
      std::unique_lock lock(mutex_);
      if (stopping_ || !demands_.empty()) continue;
      lock.unlock();
      const auto next = next_due_us();
      lock.lock();
      std::int64_t wait = kMaxWaitUs;
      if (next) wait = std::clamp<std::int64_t>(*next - clock_.monotonic_us(), 0, kMaxWaitUs);
      wake_.wait_for(lock, std::chrono::microseconds(wait));
    }
  });
}

void Scheduler::stop() {
  stopping_ = true;
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Demands that never ran still get an answer.
  std::deque<Due> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(demands_);
  }
  for (auto& due : left) {
    if (!due.done) continue;
    RunRecord run;
    run.job = due.task ? due.task->name : jobs_[due.index].job.name;
    run.ns = due.ns;
    run.trigger = due.trigger;
    run.status = "interrupted";
    run.error = "the daemon stopped before the run started";
    due.done(run);
  }
}

}  // namespace reflectd::jobs
