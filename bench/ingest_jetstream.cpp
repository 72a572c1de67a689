// bench_ingest's JetStream modes: a nats-server of its own, the events published into a
// stream, then the inlet (one shard or two) or the forwarder timed (see bench/ingest.cpp).

#include "bench/ingest_harness.hpp"

namespace reflectd::bench_ingest {

// A nats-server child process with JetStream in `dir`, on a free loopback port; killed (and
// reaped) when destroyed.
class NatsServer {
 public:
  /// `name` names its files in `dir` (a store of its own per mode: a stream left by an
  /// earlier mode would answer its ids as duplicates).
  NatsServer(const fs::path& dir, const std::string& name) {
    const char* binary = ::access("/usr/sbin/nats-server", X_OK) == 0 ? "/usr/sbin/nats-server"
                                                                      : "/usr/bin/nats-server";
    port_ = free_tcp_port();
    const std::string conf = (dir / (name + "-nats.conf")).string();
    std::ofstream(conf) << "listen: 127.0.0.1:" << port_ << "\njetstream { store_dir: \""
                        << (dir / (name + "-nats-store")).string() << "\" }\n";
    std::vector<std::string> args = {binary, "-c", conf, "-l",
                                     (dir / (name + "-nats.log")).string()};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (::posix_spawn(&pid_, binary, nullptr, nullptr, argv.data(), environ) != 0) {
      throw std::runtime_error(std::string("cannot start ") + binary +
                               " (Debian package nats-server)");
    }
  }
  ~NatsServer() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  NatsServer(const NatsServer&) = delete;
  NatsServer& operator=(const NatsServer&) = delete;
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

// Runs `work` in a child process and returns its result. The NATS client work of the
// JetStream modes runs there, so that this process never starts nats.c's threads: a daemon
// forked later (ForkedDaemon) would inherit nats.c's state with locks held by threads that
// do not exist in the child, and could hang in its first NATS call.
double in_child_process(const std::function<double()>& work) {
  std::array<int, 2> fds{};
  if (::pipe(fds.data()) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    int status = 1;
    try {
      const double value = work();
      if (::write(fds[1], &value, sizeof value) == static_cast<ssize_t>(sizeof value)) status = 0;
    } catch (const std::exception& error) {
      std::cerr << "bench_ingest: " << error.what() << '\n';
    }
    std::fflush(nullptr);
    ::_exit(status);
  }
  ::close(fds[1]);
  double value = 0;
  const ssize_t got = ::read(fds[0], &value, sizeof value);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(sizeof value) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("the NATS client process failed");
  }
  return value;
}

// A connection to `server`, retried for 10 s while it starts.
bus::NatsConnectionPtr connect_when_up(const config::JetStreamConfig& config) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    try {
      return bus::nats_connect(config, "bench_ingest", 1000);
    } catch (const bus::NatsError&) {
      if (std::chrono::steady_clock::now() > deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

// Event n's JSON with its namespace replaced by `ns` (the templates are compact JSON).
std::string with_namespace(std::string event, const std::string& from, const std::string& ns) {
  const std::string key = R"("namespace":")" + from + "\"";
  const auto at = event.find(key);
  if (at != std::string::npos) event.replace(at, key.size(), R"("namespace":")" + ns + "\"");
  return event;
}

// Creates the streams of `layouts` (replicas 1) and publishes the events into them, one per
// message on reflectd.events.<namespace_of(n)>, Nats-Msg-Id = the event's id, --window x 8 in
// flight; returns the publishing rate (events/s, every PubAck received).
double publish_to_jetstream(const Corpus& corpus, const Options& options,
                            const config::JetStreamConfig& config,
                            const std::vector<bus::StreamLayout>& layouts,
                            const std::function<std::string(std::uint64_t)>& namespace_of) {
  const bus::NatsConnectionPtr connection = connect_when_up(config);
  jsOptions js_options;
  jsOptions_Init(&js_options);
  js_options.PublishAsync.MaxPending = static_cast<int64_t>(options.window) * 8;
  jsCtx* raw = nullptr;
  if (natsConnection_JetStream(&raw, connection.get(), &js_options) != NATS_OK) {
    throw std::runtime_error("jetstream: no JetStream context");
  }
  const bus::JsCtxPtr js(raw);
  for (const auto& layout : layouts) bus::ensure_stream(js.get(), layout);
  const auto start = std::chrono::steady_clock::now();
  std::string payload;
  for (std::uint64_t n = 0; n < options.events; ++n) {
    payload.clear();
    corpus.append_event(payload, n);
    const std::string ns = namespace_of(n);
    if (ns != corpus.ns(n)) payload = with_namespace(payload, corpus.ns(n), ns);
    const std::string subject = bus::event_subject(ns);
    const std::string id = "bench:" + std::to_string(n);
    natsMsg* msg = nullptr;
    natsMsg_Create(&msg, subject.c_str(), nullptr, payload.data(),
                   static_cast<int>(payload.size()));
    natsMsgHeader_Set(msg, "Nats-Msg-Id", id.c_str());
    if (js_PublishMsgAsync(js.get(), &msg, nullptr) != NATS_OK) {
      natsMsg_Destroy(msg);
      throw std::runtime_error("jetstream: publish failed");
    }
  }
  jsPubOptions complete;
  jsPubOptions_Init(&complete);
  complete.MaxWait = 60'000;
  if (js_PublishAsyncComplete(js.get(), &complete) != NATS_OK) {
    throw std::runtime_error("jetstream: PubAcks missing after 60 s");
  }
  return static_cast<double>(options.events) /
         Seconds(std::chrono::steady_clock::now() - start).count();
}

ModeResult run_jetstream(const Corpus& corpus, const Options& options, const fs::path& dir) {
  config::Config cfg = daemon_config(options, dir, "jetstream");
  NatsServer server(dir, "jetstream");
  cfg.bus.jetstream.servers = {server.url()};
  cfg.bus.jetstream.stream = "BENCH";
  cfg.bus.jetstream.consumer = "bench";
  ModeResult result{"jetstream", 0, 0.0};
  {
    bus::StreamLayout layout;
    layout.name = "BENCH";
    layout.replicas = 1;
    result.extra["publish_events_per_s"] = in_child_process([&] {
      return publish_to_jetstream(corpus, options, cfg.bus.jetstream, {layout},
                                  [&corpus](std::uint64_t n) { return corpus.ns(n); });
    });
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient control(context, cfg.bus.control.front());
    control.wait_ready();
    const auto start = std::chrono::steady_clock::now();
    PushProgress progress;
    await_finished(control, options.events, &progress, "jetstream");
    const auto stored = std::chrono::steady_clock::now();
    result.seconds = Seconds(stored - start).count();
    // As for push: the search index's catch-up is not counted, but shown.
    result.extra["index_catch_up_s"] = await_index_catch_up(control, stored, progress, "jetstream");
    result.extra["index_lag_max_events"] = progress.max_lag;
    result.extra["daemon_peak_rss_mb"] =
        static_cast<double>(daemon.peak_rss_bytes()) / (1024.0 * 1024.0);
    if (!daemon.stop()) throw std::runtime_error("jetstream: the daemon did not exit cleanly");
  }
  result.stored = count_rows(cfg.store.path, cfg);
  remove_database(cfg.store.path);
  return result;
}

// Two shards on two nodes: event n goes to namespace bench-<n % 2> (its JSON's namespace
// rewritten), stream SHARD_<n % 2>; after publishing, both nodes start at once and the time
// runs until both have stored their half.
ModeResult run_jetstream_shards(const Corpus& corpus, const Options& options, const fs::path& dir) {
  NatsServer server(dir, "shards");
  std::vector<config::Config> configs;
  std::vector<bus::StreamLayout> layouts;
  for (int shard = 0; shard < 2; ++shard) {
    config::Config cfg = daemon_config(options, dir, "shard" + std::to_string(shard));
    cfg.bus.jetstream.servers = {server.url()};
    cfg.bus.jetstream.stream = "SHARD_" + std::to_string(shard);
    cfg.bus.jetstream.consumer = "node" + std::to_string(shard);
    configs.push_back(cfg);
    bus::StreamLayout layout;
    layout.name = cfg.bus.jetstream.stream;
    layout.namespaces = {"bench-" + std::to_string(shard)};
    layout.replicas = 1;
    layouts.push_back(layout);
  }
  ModeResult result{"jetstream-shards", 0, 0.0};
  result.extra["publish_events_per_s"] = in_child_process([&] {
    return publish_to_jetstream(corpus, options, configs[0].bus.jetstream, layouts,
                                [](std::uint64_t n) { return "bench-" + std::to_string(n % 2); });
  });
  {
    ForkedDaemon node0(configs[0]);
    ForkedDaemon node1(configs[1]);
    zmq::context_t context(1);
    ControlClient control0(context, configs[0].bus.control.front());
    ControlClient control1(context, configs[1].bus.control.front());
    control0.wait_ready();
    control1.wait_ready();
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t half0 = (options.events + 1) / 2;
    await_finished(control0, half0, nullptr, "jetstream-shards");
    const double first = Seconds(std::chrono::steady_clock::now() - start).count();
    await_finished(control1, options.events - half0, nullptr, "jetstream-shards");
    result.seconds = Seconds(std::chrono::steady_clock::now() - start).count();
    result.extra["shard0_done_s"] = first;
    if (!node0.stop() || !node1.stop()) {
      throw std::runtime_error("jetstream-shards: a daemon did not exit cleanly");
    }
  }
  for (const auto& cfg : configs) {
    result.stored += count_rows(cfg.store.path, cfg);
    remove_database(cfg.store.path);
  }
  return result;
}

// ZeroMQ ingest through a gateway with bus.forward: jetstream: windowed batches as in `ingest`,
// each answered after JetStream's PubAck (a stream of 1 replica on one nats-server); the
// gateway stores nothing, so the rate is the acknowledged events per second.
ModeResult run_forward(const Corpus& corpus, const Options& options, const fs::path& dir) {
  config::Config cfg = daemon_config(options, dir, "forward");
  NatsServer server(dir, "forward");
  cfg.bus.forward = "jetstream";
  cfg.bus.push.clear();
  cfg.bus.jetstream.servers = {server.url()};
  cfg.bus.jetstream.consumer = "";  // a gateway
  ModeResult result{"forward", 0, 0.0};
  in_child_process([&] {
    const bus::NatsConnectionPtr connection = connect_when_up(cfg.bus.jetstream);
    bus::StreamLayout layout;
    layout.name = "BENCH";
    layout.replicas = 1;
    bus::ensure_stream(bus::jetstream_context(connection.get(), 5000).get(), layout);
    return 0.0;
  });
  {
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient(context, cfg.bus.control.front()).wait_ready();
    zmq::socket_t dealer = ingest_socket(context, cfg.bus.ingest.front());
    const auto start = std::chrono::steady_clock::now();
    result.stored = ingest_windowed(dealer, corpus, 0, options.events, options);
    result.seconds = Seconds(std::chrono::steady_clock::now() - start).count();
    if (!daemon.stop()) throw std::runtime_error("forward: the daemon did not exit cleanly");
  }
  remove_database(cfg.store.path);
  return result;
}

}  // namespace reflectd::bench_ingest
