#include "daemon/read_thread.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include <stdexcept>

#include "jobs/sql_functions.hpp"
#include "model/commands.hpp"
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
  static const std::vector<std::string> kCommands = model::read_commands();
  return kCommands;
}

bool ReadThread::answers(const std::string& cmd) { return handlers().count(cmd) > 0; }

const std::map<std::string, ReadThread::Handler, std::less<>>& ReadThread::handlers() {
  using recall::ReadScope;
  // The list reads record no access; recall, context and get record the events they return.
  static const std::map<std::string, Handler, std::less<>> kHandlers{
      {"search",
       [](ReadThread& t, const nlohmann::json& request, const ReadScope& scope, Answer&) {
         return recall::read_search(t.db_, request, scope, t.clock_.now_us());
       }},
      {"events", [](ReadThread& t, const nlohmann::json& request, const ReadScope& scope,
                    Answer&) { return recall::read_events(t.db_, request, scope); }},
      {"knowledge", [](ReadThread& t, const nlohmann::json& request, const ReadScope& scope,
                       Answer&) { return recall::read_knowledge(t.db_, request, scope); }},
      {"observations", [](ReadThread& t, const nlohmann::json& request, const ReadScope& scope,
                          Answer&) { return recall::read_observations(t.db_, request, scope); }},
      {"entities", [](ReadThread& t, const nlohmann::json& request, const ReadScope& scope,
                      Answer&) { return recall::read_entities(t.db_, request, scope); }},
      {"clusters", [](ReadThread& t, const nlohmann::json& request, const ReadScope& scope,
                      Answer&) { return recall::read_clusters(t.db_, request, scope); }},
      {"medallion", [](ReadThread& t, const nlohmann::json& request, const ReadScope& scope,
                       Answer&) { return recall::read_medallion(t.db_, request, scope); }},
      {"facts", [](ReadThread& t, const nlohmann::json& request, const ReadScope& scope,
                   Answer&) { return recall::read_facts(t.db_, request, scope); }},
      {"audit", [](ReadThread& t, const nlohmann::json& request, const ReadScope& scope,
                   Answer&) { return recall::read_audit(t.db_, request, scope); }},
      {"recall", &ReadThread::answer_recall},
      {"context", &ReadThread::answer_context},
      {"get", &ReadThread::answer_get},
      {"episode", &ReadThread::answer_episode},
  };
  return kHandlers;
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
  Answer answer{cmd, clock_.now_us(), {}};
  const auto handler = handlers().find(cmd);
  if (handler == handlers().end()) throw std::runtime_error("no read handler");
  nlohmann::json reply = handler->second(*this, request, scope, answer);
  if (answer.accessed.empty()) return reply;
  const std::lock_guard lock(accesses_mutex_);
  for (const std::int64_t seq : answer.accessed) accesses_.record(seq, answer.now_us);
  return reply;
}

nlohmann::json ReadThread::Answer::error(const recall::RecallError& e) const {
  return nlohmann::json{{"ok", false}, {"error", cmd + ": " + e.message}};
}

nlohmann::json ReadThread::answer_recall(ReadThread& t, const nlohmann::json& request,
                                         const recall::ReadScope& scope, Answer& answer) {
  auto parsed = recall::recall_request_from_json(request);
  if (auto* e = std::get_if<recall::RecallError>(&parsed)) return answer.error(*e);
  auto found = t.recaller_->recall(std::get<recall::RecallRequest>(parsed), scope, answer.now_us);
  if (auto* e = std::get_if<recall::RecallError>(&found)) return answer.error(*e);
  const auto& response = std::get<recall::RecallResponse>(found);
  for (const auto& hit : response.results) {
    if (!hit.redacted) answer.accessed.push_back(hit.seq);
  }
  return recall::to_json(response);
}

nlohmann::json ReadThread::answer_context(ReadThread& t, const nlohmann::json& request,
                                          const recall::ReadScope& scope, Answer& answer) {
  auto parsed = recall::context_request_from_json(request);
  if (auto* e = std::get_if<recall::RecallError>(&parsed)) return answer.error(*e);
  auto built = recall::build_context(*t.recaller_, std::get<recall::ContextRequest>(parsed), scope,
                                     answer.now_us);
  if (auto* e = std::get_if<recall::RecallError>(&built)) return answer.error(*e);
  const auto& context = std::get<recall::CompressedContext>(built);
  answer.accessed = context.event_seqs;
  return recall::to_json(context);
}

nlohmann::json ReadThread::answer_get(ReadThread& t, const nlohmann::json& request,
                                      const recall::ReadScope& scope, Answer& answer) {
  auto read = t.read_back_.get(request, scope, answer.now_us);
  if (auto* e = std::get_if<recall::RecallError>(&read)) return answer.error(*e);
  nlohmann::json reply = std::get<nlohmann::json>(std::move(read));
  for (const auto& event : reply["events"]) {
    if (!event.value("redacted", false)) {
      answer.accessed.push_back(event["seq"].get<std::int64_t>());
    }
  }
  return reply;
}

nlohmann::json ReadThread::answer_episode(ReadThread& t, const nlohmann::json& request,
                                          const recall::ReadScope& scope, Answer& answer) {
  auto read = t.read_back_.episode(request, scope, answer.now_us);
  if (auto* e = std::get_if<recall::RecallError>(&read)) return answer.error(*e);
  return std::get<nlohmann::json>(std::move(read));
}

}  // namespace reflectd::daemon
