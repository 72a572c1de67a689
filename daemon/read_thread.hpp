#pragma once
// The read library's commands (recall/: recall, context, get, episode, search, events,
// knowledge, observations, entities, clusters, medallion) on a thread of their own, with
// their own read-only connection: a slow read (a broad question over a large namespace) never
// holds up the io thread, which carries every acknowledgement of ingest.
//
// Requests are answered in the order they were posted; each reply goes through its
// bus::ControlReply (callable from any thread). Accesses (store/access_counts.hpp) are
// recorded here and taken by the daemon, which hands them to the writer.
//
// Thread-safety: post(), reconfigure(), take_accesses() and stop() may be called from any
// thread. Errors: the constructor throws SQLite::Exception when the connection cannot be
// opened; a read that fails answers {"ok":false,"error":"<cmd>: request failed: ..."}.

#include <SQLiteCpp/SQLiteCpp.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bus/bus.hpp"
#include "common/clock.hpp"
#include "common/histogram.hpp"
#include "model/formulas.hpp"
#include "recall/read_back.hpp"
#include "recall/recall.hpp"
#include "store/access_counts.hpp"
#include "store/database.hpp"

namespace reflectd::daemon {

class ReadThread {
 public:
  /// Opens a read-only connection on `database` and starts the thread.
  ReadThread(const store::DatabaseOptions& database, const model::VitalityParams& vitality,
             const recall::RecallParams& params, const Clock& clock);
  ~ReadThread();
  ReadThread(const ReadThread&) = delete;
  ReadThread& operator=(const ReadThread&) = delete;

  /// The commands this thread answers, sorted: model::command_table()'s Answerer::kRead ones.
  static const std::vector<std::string>& commands();
  /// True for the commands this thread has a handler for.
  static bool answers(const std::string& cmd);
  /// Per command: time from post() to the answer (queue wait included). Thread-safe.
  std::vector<std::pair<std::string, HistogramSnapshot>> durations() const;

  /// Queues `cmd` (one answers() accepts) for `scope`; `reply` receives the answer on this
  /// object's thread.
  void post(std::string cmd, nlohmann::json request, recall::ReadScope scope,
            bus::ControlReply reply);

  /// Applies new recall and vitality parameters to the reads that follow (a reload).
  void reconfigure(const model::VitalityParams& vitality, const recall::RecallParams& params);

  /// The accesses recorded since the last call.
  store::AccessBatch take_accesses();
  /// How many distinct events the recorded accesses name (the daemon flushes early past
  /// store::kAccessBatchFlush).
  std::size_t pending_accesses();

  /// Drops the queued requests (their callers time out), finishes the one running, joins.
  void stop();

 private:
  // What a handler is given besides the request: its command, the time, and where it lists
  // the events it returned (their access counts go up).
  struct Answer {
    const std::string& cmd;
    std::int64_t now_us;
    std::vector<std::int64_t> accessed;
    nlohmann::json error(const recall::RecallError& e) const;
  };
  using Handler = nlohmann::json (*)(ReadThread& thread, const nlohmann::json& request,
                                     const recall::ReadScope& scope, Answer& answer);
  /// Every read by its table name (model/commands.hpp).
  static const std::map<std::string, Handler, std::less<>>& handlers();
  static nlohmann::json answer_recall(ReadThread& t, const nlohmann::json& request,
                                      const recall::ReadScope& scope, Answer& answer);
  static nlohmann::json answer_context(ReadThread& t, const nlohmann::json& request,
                                       const recall::ReadScope& scope, Answer& answer);
  static nlohmann::json answer_get(ReadThread& t, const nlohmann::json& request,
                                   const recall::ReadScope& scope, Answer& answer);
  static nlohmann::json answer_episode(ReadThread& t, const nlohmann::json& request,
                                       const recall::ReadScope& scope, Answer& answer);
  nlohmann::json answer(const std::string& cmd, const nlohmann::json& request,
                        const recall::ReadScope& scope);

  const Clock& clock_;
  // One per commands() entry, filled by the constructor and never resized: read concurrently.
  std::map<std::string, std::unique_ptr<Histogram>> durations_;
  SQLite::Database db_;
  model::VitalityParams vitality_;  // registered on db_: changed on this thread only
  std::unique_ptr<recall::Recaller> recaller_;
  recall::ReadBack read_back_;
  std::mutex accesses_mutex_;
  store::AccessBatch accesses_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

}  // namespace reflectd::daemon
