// GET /metrics: the daemon's counters and histograms in the Prometheus text format. Runs on the
// metrics server's thread (metrics/http_server.hpp) and reads only what is safe to read from
// any thread: atomics, Histogram snapshots, and the scheduler's and read thread's tallies
// (their own locks). docs/METRICS.md lists every family.

#include <atomic>
#include <filesystem>
#include <string>
#include <system_error>

#include "common/version.hpp"
#include "daemon/daemon.hpp"
#include "metrics/exposition.hpp"

namespace reflectd::daemon {
namespace {

using metrics::Labels;
using Samples = std::vector<std::pair<Labels, double>>;

double as_double(std::uint64_t value) { return static_cast<double>(value); }

// The one sample of a family without labels.
template <typename Number>
Samples one(const std::atomic<Number>& value) {
  return {{{}, static_cast<double>(value.load())}};
}

double file_bytes(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<double>(size);
}

void add_socket(Samples& samples, const std::string& socket, const bus::SocketEventCounts& counts) {
  samples.push_back({{{"socket", socket}, {"outcome", "stored"}}, as_double(counts.stored.load())});
  samples.push_back(
      {{{"socket", socket}, {"outcome", "duplicate"}}, as_double(counts.duplicate.load())});
  samples.push_back(
      {{{"socket", socket}, {"outcome", "rejected"}}, as_double(counts.rejected.load())});
}

// The JetStream inlet's and forwarder's series; none for a part that is off (nullptr).
void add_nats_metrics(metrics::TextExposition& out, const bus::JetStreamInlet* jetstream,
                      const bus::JetStreamForwarder* forwarder) {
  if (jetstream != nullptr) {
    const bus::JetStreamStats& js = jetstream->stats();
    out.counter("reflectd_jetstream_messages_total",
                "JetStream messages pulled (redeliveries included), by what was sent back: ack "
                "after the commit, term for a dead letter, nak after a storage error.",
                {{{{"reply", "ack"}}, as_double(js.acked.load())},
                 {{{"reply", "term"}}, as_double(js.terminated.load())},
                 {{{"reply", "nak"}}, as_double(js.nacked.load())}});
    out.counter("reflectd_jetstream_pull_errors_total",
                "Pulls from the JetStream consumer that failed (timeouts not counted).",
                one(js.pull_errors));
    out.counter("reflectd_jetstream_from_leader_total",
                "Messages read from the stream's leader by sequence, past a consumer that "
                "did not deliver them (no leader, or its server's copy of the stream behind): "
                "stored, never acknowledged.",
                one(js.from_leader));
    out.counter("reflectd_jetstream_already_read_total",
                "Messages the consumer delivered after they had been read from the stream's "
                "leader: acknowledged, not stored again.",
                one(js.already_read));
    out.gauge("reflectd_jetstream_connected",
              "1 while the JetStream inlet is subscribed and its connection is up.",
              {{{}, js.connected.load() ? 1.0 : 0.0}});
  }
  if (forwarder != nullptr) {
    const bus::ForwarderStats& forwarded = forwarder->stats();
    out.counter("reflectd_jetstream_forwarded_events_total",
                "Events of acknowledged ingest forwarded to JetStream (bus.forward: jetstream), "
                "by result: stored or duplicate (PubAck), failed (error or timeout; answered as "
                "not stored).",
                {{{{"result", "stored"}}, as_double(forwarded.stored.load())},
                 {{{"result", "duplicate"}}, as_double(forwarded.duplicate.load())},
                 {{{"result", "failed"}}, as_double(forwarded.failed.load())}});
  }
}

}  // namespace

std::string Daemon::render_metrics() const {
  const store::WriterStats& writer = writer_->stats();
  const bus::BusStats& bus = bus_->stats();
  const store::WriteGateStats& gate = write_gate_->stats();
  metrics::TextExposition out;

  out.gauge("reflectd_build_info", "Always 1; the version label says which reflectd runs.",
            {{{{"version", kVersion}}, 1}});
  out.gauge("process_start_time_seconds", "When the daemon started, seconds since the Unix epoch.",
            {{{}, static_cast<double>(started_us_) / 1e6}});

  Samples events;
  add_socket(events, "ingest", bus.ingest);
  add_socket(events, "push", bus.push);
  add_socket(events, "subscribe", bus.subscribe);
  add_socket(events, "http", bus.http);
  if (jetstream_) add_socket(events, "jetstream", jetstream_->stats().events);
  out.counter("reflectd_events_total",
              "Events received, by socket and outcome (stored, duplicate, rejected; on push, "
              "subscribe and jetstream a message kept whole as a dead letter counts as one "
              "rejected).",
              events);
  add_nats_metrics(out, jetstream_.get(), forwarder_.get());
  out.counter("reflectd_messages_total", "Messages read on the ingest, push and subscribe sockets.",
              one(bus.messages));
  out.counter("reflectd_dead_letters_total",
              "Messages or events kept in the dead_letters table instead of being stored.",
              one(writer.dead_letters));
  out.counter("reflectd_commits_total", "Group transactions committed by the writer.",
              one(writer.commits));
  out.counter("reflectd_storage_errors_total",
              "Failed fdatasync calls of the WAL (after one, nothing more is stored until a "
              "restart).",
              one(writer.storage_errors));
  out.counter("reflectd_replies_dropped_total",
              "Replies a vanished or slow peer never took (it resends with the same ids).",
              one(bus.replies_dropped));
  out.counter("reflectd_ingest_pauses_total",
              "Times the bus stopped reading because the writer's queue was full.",
              one(bus.paused));
  out.gauge("reflectd_writer_queue_events", "Events received and not yet committed.",
            one(writer.queue_events));
  const std::int64_t last_seq = writer.last_seq.load();
  const std::int64_t indexed = writer.fts_indexed_seq.load();
  out.gauge("reflectd_last_seq", "Highest events.seq committed.",
            {{{}, static_cast<double>(last_seq)}});
  out.gauge("reflectd_search_index_lag_events",
            "Committed events not yet in the full-text index (last seq minus the index's "
            "watermark).",
            {{{}, static_cast<double>(std::max<std::int64_t>(0, last_seq - indexed))}});
  out.gauge("reflectd_database_bytes", "Size of the database file and of its WAL.",
            {{{{"file", "db"}}, file_bytes(store_path_)},
             {{{"file", "wal"}}, file_bytes(store_path_ + "-wal")}});

  out.histogram("reflectd_ack_latency_seconds",
                "Ingest acknowledgement latency per message: from reading it off the socket to "
                "handing the reply to libzmq, after the commit and the WAL's fdatasync.",
                {{{}, bus.ack_latency.snapshot()}});
  out.histogram("reflectd_commit_duration_seconds",
                "Duration of each group transaction's COMMIT (SQLite writing the WAL frames).",
                {{{}, writer.commit_duration.snapshot()}});
  out.histogram("reflectd_wal_sync_duration_seconds",
                "Duration of each fdatasync of the WAL before acknowledgements are sent.",
                {{{}, writer.wal_sync_duration.snapshot()}});

  Samples runs;
  std::vector<std::pair<Labels, HistogramSnapshot>> run_durations;
  for (const jobs::JobRunTally& tally : scheduler_->run_tallies()) {
    for (const auto& [status, count] : tally.by_status) {
      runs.push_back({{{"job", tally.job}, {"status", status}}, as_double(count)});
    }
    run_durations.push_back({{{"job", tally.job}}, tally.duration});
  }
  out.counter("reflectd_job_runs_total",
              "Job runs since start by job and status (ok, skipped, failed, timeout, "
              "interrupted); one-off tasks such as forget count under their own name.",
              runs);
  out.histogram("reflectd_job_run_duration_seconds", "Duration of each job run, by job.",
                run_durations);
  out.counter("reflectd_write_gate_job_yields_total",
              "Times a job's write transaction gave the write lock to waiting ingest.",
              one(gate.job_yields));
  out.counter("reflectd_write_gate_writer_waits_total",
              "Times the writer waited for a job's write transaction to yield.",
              one(gate.writer_waits));

  std::vector<std::pair<Labels, HistogramSnapshot>> reads;
  for (auto& [cmd, snapshot] : reads_->durations()) reads.push_back({{{"command", cmd}}, snapshot});
  out.histogram("reflectd_read_duration_seconds",
                "Control reads (recall, context, get, ...) from request to answer, queue wait "
                "included, by command.",
                reads);

  const std::uint64_t accepted = zap_ ? zap_->stats().accepted.load() : 0;
  const std::uint64_t refused = zap_ ? zap_->stats().refused.load() : 0;
  out.counter("reflectd_handshakes_total",
              "CURVE handshakes checked against the authorized keys, by result (0 without "
              "CURVE).",
              {{{{"result", "accepted"}}, as_double(accepted)},
               {{{"result", "refused"}}, as_double(refused)}});
  return out.text();
}

}  // namespace reflectd::daemon
