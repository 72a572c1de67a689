#include "daemon/read_thread.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include <algorithm>

#include "jobs/sql_functions.hpp"
#include "recall/context.hpp"
#include "recall/record_reads.hpp"

namespace reflectd::daemon {

ReadThread::ReadThread(const store::DatabaseOptions& database,
                       const model::VitalityParams& vitality, const recall::RecallParams& params,
                       const Clock& clock)
    : clock_(clock),
      durations_([] {
        std::map<std::string, std::unique_ptr<Histogram>> made;
        for (const std::string& cmd : commands()) {
          made.emplace(cmd, std::make_unique<Histogram>(Histogram::latency_bounds_s()));
        }
        return made;
      }()),
      db_(store::open_database(database, store::Access::kReader)),
      vitality_(vitality),
      recaller_((jobs::register_sql_functions(db_, vitality_),
                 std::make_unique<recall::Recaller>(db_, params))),
      read_back_(db_),
      work_(boost::asio::make_work_guard(io_)),
      thread_([this] { io_.run(); }) {}

ReadThread::~ReadThread() { stop(); }

const std::vector<std::string>& ReadThread::commands() {
  static const std::vector<std::string> kCommands{
      "audit", "clusters",  "context",   "entities",     "episode", "events", "facts",
      "get",   "knowledge", "medallion", "observations", "recall",  "search"};
  return kCommands;
}

bool ReadThread::answers(const std::string& cmd) {
  const auto& known = commands();
  return std::find(known.begin(), known.end(), cmd) != known.end();
}

std::vector<std::pair<std::string, HistogramSnapshot>> ReadThread::durations() const {
  std::vector<std::pair<std::string, HistogramSnapshot>> out;
  for (const auto& [cmd, histogram] : durations_) out.emplace_back(cmd, histogram->snapshot());
  return out;
}

void ReadThread::stop() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

void ReadThread::post(std::string cmd, nlohmann::json request, recall::ReadScope scope,
                      bus::ControlReply reply) {
  const std::int64_t posted_us = clock_.monotonic_us();
  boost::asio::post(io_, [this, cmd = std::move(cmd), request = std::move(request),
                          scope = std::move(scope), reply = std::move(reply), posted_us] {
    nlohmann::json answered;
    try {
      answered = answer(cmd, request, scope);
    } catch (const std::exception& error) {
      answered = {{"ok", false}, {"error", cmd + ": request failed: " + error.what()}};
    }
    if (const auto it = durations_.find(cmd); it != durations_.end()) {
      it->second->observe_us(clock_.monotonic_us() - posted_us);
    }
    reply(answered);
  });
}

void ReadThread::reconfigure(const model::VitalityParams& vitality,
                             const recall::RecallParams& params) {
  boost::asio::post(io_, [this, vitality, params] {
    try {
      vitality_ = vitality;
      jobs::register_sql_functions(db_, vitality_);
      recaller_ = std::make_unique<recall::Recaller>(db_, params);
    } catch (const std::exception& error) {
      // The previous recaller stays; reads go on with the parameters they had.
      spdlog::error("read thread: new recall parameters not applied: {}", error.what());
    }
  });
}

store::AccessBatch ReadThread::take_accesses() {
  const std::lock_guard lock(accesses_mutex_);
  return accesses_.take();
}

std::size_t ReadThread::pending_accesses() {
  const std::lock_guard lock(accesses_mutex_);
  return accesses_.size();
}

nlohmann::json ReadThread::answer(const std::string& cmd, const nlohmann::json& request,
                                  const recall::ReadScope& scope) {
  const std::int64_t now = clock_.now_us();
  auto error = [&cmd](const recall::RecallError& e) {
    return nlohmann::json{{"ok", false}, {"error", cmd + ": " + e.message}};
  };
  if (cmd == "search") return recall::read_search(db_, request, scope, now);
  if (cmd == "events") return recall::read_events(db_, request, scope);
  if (cmd == "knowledge") return recall::read_knowledge(db_, request, scope);
  if (cmd == "observations") return recall::read_observations(db_, request, scope);
  if (cmd == "entities") return recall::read_entities(db_, request, scope);
  if (cmd == "clusters") return recall::read_clusters(db_, request, scope);
  if (cmd == "medallion") return recall::read_medallion(db_, request, scope);
  if (cmd == "facts") return recall::read_facts(db_, request, scope);
  if (cmd == "audit") return recall::read_audit(db_, request, scope);
  std::vector<std::int64_t> accessed;
  nlohmann::json reply;
  if (cmd == "recall") {
    auto parsed = recall::recall_request_from_json(request);
    if (auto* e = std::get_if<recall::RecallError>(&parsed)) return error(*e);
    auto found = recaller_->recall(std::get<recall::RecallRequest>(parsed), scope, now);
    if (auto* e = std::get_if<recall::RecallError>(&found)) return error(*e);
    const auto& response = std::get<recall::RecallResponse>(found);
    for (const auto& hit : response.results) {
      if (!hit.redacted) accessed.push_back(hit.seq);
    }
    reply = recall::to_json(response);
  } else if (cmd == "context") {
    auto parsed = recall::context_request_from_json(request);
    if (auto* e = std::get_if<recall::RecallError>(&parsed)) return error(*e);
    auto built =
        recall::build_context(*recaller_, std::get<recall::ContextRequest>(parsed), scope, now);
    if (auto* e = std::get_if<recall::RecallError>(&built)) return error(*e);
    const auto& context = std::get<recall::CompressedContext>(built);
    accessed = context.event_seqs;
    reply = recall::to_json(context);
  } else {
    auto read = cmd == "get" ? read_back_.get(request, scope, now)
                             : read_back_.episode(request, scope, now);
    if (auto* e = std::get_if<recall::RecallError>(&read)) return error(*e);
    reply = std::get<nlohmann::json>(std::move(read));
    if (cmd == "get") {
      for (const auto& event : reply["events"]) {
        if (!event.value("redacted", false)) accessed.push_back(event["seq"].get<std::int64_t>());
      }
    }
  }
  const std::lock_guard lock(accesses_mutex_);
  for (const std::int64_t seq : accessed) accesses_.record(seq, now);
  return reply;
}

}  // namespace reflectd::daemon
