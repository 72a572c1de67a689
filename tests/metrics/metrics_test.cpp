// GET /metrics: the exposition's formatting exactly, then a running daemon
// scraped by a real HTTP client (curl) and read back by the Prometheus Python client's own
// parser (tests/metrics/parse_exposition.py), with counts that follow from what the test sent.

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "common/histogram.hpp"
#include "metrics/exposition.hpp"
#include "metrics/http_server.hpp"
#include "support/daemon_fixture.hpp"
#include "support/process.hpp"

using namespace reflectd;
using nlohmann::json;
using namespace std::chrono_literals;

TEST_CASE("histogram: Prometheus buckets hold values up to and including their bound") {
  Histogram histogram({0.0001, 0.001, 0.01});
  for (const std::int64_t us : {0, 100, 101, 1000, 1001, 10000, 10001, -5}) {
    histogram.observe_us(us);
  }
  const HistogramSnapshot snapshot = histogram.snapshot();
  CHECK(snapshot.cumulative == std::vector<std::uint64_t>{3, 5, 7});  // 0, 100, -5 | 101, 1000 |
  CHECK(snapshot.count == 8);
  CHECK(snapshot.sum_s == Approx(0.022203).margin(1e-12));
  CHECK_THROWS_AS(Histogram({0.1, 0.1}), std::invalid_argument);
  CHECK_THROWS_AS(Histogram({0}), std::invalid_argument);
}

TEST_CASE("exposition: HELP, TYPE, labels and values as the text format 0.0.4 writes them") {
  metrics::TextExposition out;
  out.counter("x_total", "Help with a \\ backslash\nand a line feed.",
              {{{{"path", "a\"b\\c\nd"}}, 3}, {{}, 2.5}});
  out.gauge("g", "A gauge.", {{{}, 1e-05}, {{{"k", "v"}}, -1}});
  Histogram histogram({0.5, 1});
  histogram.observe_us(250'000);
  histogram.observe_us(2'000'000);
  out.histogram("h_seconds", "A histogram.", {{{{"job", "decay"}}, histogram.snapshot()}});
  CHECK(out.text() ==
        "# HELP x_total Help with a \\\\ backslash\\nand a line feed.\n"
        "# TYPE x_total counter\n"
        "x_total{path=\"a\\\"b\\\\c\\nd\"} 3\n"
        "x_total 2.5\n"
        "# HELP g A gauge.\n"
        "# TYPE g gauge\n"
        "g 1e-05\n"
        "g{k=\"v\"} -1\n"
        "# HELP h_seconds A histogram.\n"
        "# TYPE h_seconds histogram\n"
        "h_seconds_bucket{job=\"decay\",le=\"0.5\"} 1\n"
        "h_seconds_bucket{job=\"decay\",le=\"1\"} 1\n"
        "h_seconds_bucket{job=\"decay\",le=\"+Inf\"} 2\n"
        "h_seconds_sum{job=\"decay\"} 2.25\n"
        "h_seconds_count{job=\"decay\"} 2\n");
  CHECK(metrics::format_value(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(metrics::format_value(std::nan("")) == "NaN");
}

namespace {

// One sample of a parsed family: its value, or nullopt when no sample has exactly `labels`.
std::optional<double> sample(const json& families, const std::string& family,
                             const std::string& name, const json& labels) {
  const auto found = families.find(family);
  if (found == families.end()) return std::nullopt;
  for (const json& s : (*found)["samples"]) {
    if (s[0] == name && s[1] == labels && s[2].is_number()) return s[2].get<double>();
  }
  return std::nullopt;
}

// nlohmann::json's members may throw in theory, which clang-tidy reads into the implicit
// special members; a throw would fail the test, as it should.
struct Scrape {                    // NOLINT(bugprone-exception-escape)
  reflectd::test::RunResult curl;  // curl's own output: headers (-D -), then the body
  json families;                   // the parser's view of the body
  std::string parse_error;
};

Scrape scrape(const test::TempDir& dir, const std::string& url) {
  Scrape out;
  const std::string body = dir.file("metrics.txt");
  out.curl = test::run_process(
      {"/usr/bin/curl", "--silent", "--show-error", "--max-time", "20", "-D", "-", "-o", body, url},
      30s);
  const auto parsed = test::run_process(
      {"/usr/bin/python3", std::string(REFLECTD_SOURCE_DIR) + "/tests/metrics/parse_exposition.py",
       body},
      30s);
  if (parsed.status.code == 0) {
    out.families = json::parse(parsed.out)["families"];
  } else {
    out.parse_error = parsed.err;
  }
  return out;
}

std::string event(const std::string& id, const std::string& kind = "observation") {
  return json{{"id", id}, {"kind", kind}, {"namespace", "metrics"}, {"content", "event " + id}}
      .dump();
}

}  // namespace

TEST_CASE("GET /metrics on a running daemon: parsed by the Prometheus client, counts exact",
          "[e2e]") {
  if (test::run_process({"/usr/bin/python3", "-c", "import prometheus_client"}, 30s).status.code !=
      0) {
    FAIL("/usr/bin/python3 with python3-prometheus-client is needed (scripts/install-deps.sh)");
  }
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  test::disable_background_jobs(config);
  config.jobs.decay.enabled = true;  // never due by itself: run below on demand
  config.jobs.decay.interval_s = 604800;
  config.jobs.decay.after_events = 0;
  config.jobs.decay.idle_s = 0;
  test::RunningDaemon daemon(std::move(config));

  zmq::context_t context(1);
  auto control =
      test::make_client(context, zmq::socket_type::dealer, daemon.endpoints().control[0]);
  const json status = test::control(control, {{"cmd", "status"}});
  const std::string url = status["endpoints"]["metrics"].get<std::string>();
  INFO("status: " << status.dump());
  REQUIRE_THAT(url, Catch::StartsWith("http://127.0.0.1:") && Catch::EndsWith("/metrics"));

  // Ingest: 5 stored, 1 duplicate, 1 rejected (unknown kind), one message each.
  auto dealer = test::make_client(context, zmq::socket_type::dealer, daemon.endpoints().ingest[0]);
  for (int i = 0; i < 5; ++i) {
    REQUIRE(test::ingest(dealer, event("m" + std::to_string(i)))["ok"] == true);
  }
  test::ingest(dealer, event("m0"));
  test::ingest(dealer, event("bad", "nope"));
  // Push: one stored, one kept as a dead letter; nothing answers push, so wait on status.
  auto push = test::make_client(context, zmq::socket_type::push, daemon.endpoints().push[0]);
  push.send(zmq::buffer(event("p1")));
  push.send(zmq::str_buffer("{not json"));
  REQUIRE(test::wait_until(
      [&] {
        const json s = test::control(control, {{"cmd", "status"}});
        return s["events"]["stored"] == 6 && s["dead_letters"] == 1;
      },
      20s));
  const json run = test::control(control, {{"cmd", "run"}, {"job", "decay"}, {"wait", true}});
  INFO("run: " << run.dump());
  REQUIRE(run["ok"] == true);
  const json recalled = test::control(control, {{"cmd", "recall"}, {"text", "event m1"}});
  REQUIRE(recalled["ok"] == true);

  const Scrape first = scrape(dir, url);
  INFO("curl: " << first.curl.out << first.curl.err << "\nparser: " << first.parse_error);
  REQUIRE(first.curl.status.code == 0);
  CHECK_THAT(first.curl.out, Catch::StartsWith("HTTP/1.1 200 OK") &&
                                 Catch::Contains("Content-Type: text/plain; version=0.0.4; "
                                                 "charset=utf-8"));
  REQUIRE(first.parse_error.empty());
  const json& f = first.families;
  const auto events = [&](const char* socket, const char* outcome) {
    return sample(f, "reflectd_events", "reflectd_events_total",
                  {{"socket", socket}, {"outcome", outcome}});
  };
  CHECK(f["reflectd_events"]["type"] == "counter");
  CHECK(events("ingest", "stored") == 5.0);
  CHECK(events("ingest", "duplicate") == 1.0);
  CHECK(events("ingest", "rejected") == 1.0);
  CHECK(events("push", "stored") == 1.0);
  CHECK(events("push", "rejected") == 1.0);
  CHECK(events("subscribe", "stored") == 0.0);
  CHECK(sample(f, "reflectd_messages", "reflectd_messages_total", json::object()) == 9.0);
  CHECK(sample(f, "reflectd_dead_letters", "reflectd_dead_letters_total", json::object()) == 1.0);
  CHECK(sample(f, "reflectd_last_seq", "reflectd_last_seq", json::object()) == 6.0);
  CHECK(sample(f, "reflectd_search_index_lag_events", "reflectd_search_index_lag_events",
               json::object())
            .has_value());
  CHECK(sample(f, "reflectd_database_bytes", "reflectd_database_bytes", {{"file", "db"}}) > 0.0);

  // One acknowledgement per ingest message; a latency histogram in seconds, cumulative.
  CHECK(f["reflectd_ack_latency_seconds"]["type"] == "histogram");
  CHECK(sample(f, "reflectd_ack_latency_seconds", "reflectd_ack_latency_seconds_count",
               json::object()) == 7.0);
  CHECK(sample(f, "reflectd_ack_latency_seconds", "reflectd_ack_latency_seconds_bucket",
               {{"le", "+Inf"}}) == 7.0);
  CHECK(sample(f, "reflectd_ack_latency_seconds", "reflectd_ack_latency_seconds_sum",
               json::object()) > 0.0);
  CHECK(sample(f, "reflectd_commit_duration_seconds", "reflectd_commit_duration_seconds_count",
               json::object()) >= 1.0);

  CHECK(sample(f, "reflectd_job_runs", "reflectd_job_runs_total",
               {{"job", "decay"}, {"status", "ok"}}) == 1.0);
  CHECK(sample(f, "reflectd_job_run_duration_seconds", "reflectd_job_run_duration_seconds_count",
               {{"job", "decay"}}) == 1.0);
  CHECK(sample(f, "reflectd_read_duration_seconds", "reflectd_read_duration_seconds_count",
               {{"command", "recall"}}) == 1.0);
  CHECK(sample(f, "reflectd_read_duration_seconds", "reflectd_read_duration_seconds_count",
               {{"command", "get"}}) == 0.0);
  CHECK(sample(f, "reflectd_handshakes", "reflectd_handshakes_total", {{"result", "refused"}}) ==
        0.0);
  for (const auto& [name, family] : f.items()) {
    INFO(name);
    CHECK_FALSE(family["help"].get<std::string>().empty());
  }

  // Counters only grow: two more ingest messages show in the next scrape.
  test::ingest(dealer, event("m5"));
  test::ingest(dealer, event("m6"));
  const Scrape second = scrape(dir, url);
  REQUIRE(second.parse_error.empty());
  CHECK(sample(second.families, "reflectd_events", "reflectd_events_total",
               {{"socket", "ingest"}, {"outcome", "stored"}}) == 7.0);
  CHECK(sample(second.families, "reflectd_ack_latency_seconds",
               "reflectd_ack_latency_seconds_count", json::object()) == 9.0);

  // Other paths and methods get a status and a reason; HEAD gets the headers only.
  const std::string base = url.substr(0, url.size() - std::string("/metrics").size());
  const auto code = [&](std::vector<std::string> args) {
    std::vector<std::string> argv{"/usr/bin/curl", "--silent", "--max-time",  "20", "-o",
                                  "/dev/null",     "-w",       "%{http_code}"};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv, 30s).out;
  };
  CHECK(code({base + "/"}) == "404");
  CHECK(code({"-X", "POST", url}) == "405");
  CHECK(code({"--head", url}) == "200");
  CHECK(code({url + "?name[]=x"}) == "200");
  const auto raw = test::run_process({"/usr/bin/curl", "--silent", "--max-time", "20", "--http0.9",
                                      "--data-binary", "x", "-X", "BREW", base + "/metrics"},
                                     30s);
  CHECK(raw.status.code == 0);

  // The daemon still serves after all of that, and stops cleanly.
  CHECK(test::ingest(dealer, event("m7"))["ok"] == true);
  CHECK(daemon.stop() == 0);
  CHECK(test::run_process({"/usr/bin/curl", "--silent", "--max-time", "5", url}, 30s).status.code !=
        0);
}

TEST_CASE("metrics_listen: a taken port or a malformed address fails at startup, naming it") {
  test::TempDir dir;
  config::Config first = test::loopback_config(dir);
  test::disable_background_jobs(first);
  test::RunningDaemon running(first);
  zmq::context_t context(1);
  auto control =
      test::make_client(context, zmq::socket_type::dealer, running.endpoints().control[0]);
  const std::string url =
      test::control(control, {{"cmd", "status"}})["endpoints"]["metrics"].get<std::string>();
  const std::string taken = url.substr(7, url.size() - 7 - std::string("/metrics").size());

  test::TempDir other;
  for (const auto& [address, expected] : std::vector<std::pair<std::string, std::string>>{
           {taken, "metrics address '" + taken + "': cannot listen: Address already in use"},
           {"127.0.0.1", "metrics address '127.0.0.1': expected host:port"},
           {"127.0.0.1:99999", "metrics address '127.0.0.1:99999': the port must be 0-65535"},
           {"[::1:80", "metrics address '[::1:80': expected [IPv6]:port"}}) {
    config::Config second = test::loopback_config(other);
    test::disable_background_jobs(second);
    second.daemon.metrics_listen = address;
    SystemClock clock;
    daemon::Daemon daemon(second, {}, clock);
    CHECK_THROWS_WITH(daemon.start(), expected);
  }

  // "" turns the endpoint off.
  config::Config off = test::loopback_config(other);
  test::disable_background_jobs(off);
  off.daemon.metrics_listen = "";
  test::RunningDaemon quiet(off);
  auto quiet_control =
      test::make_client(context, zmq::socket_type::dealer, quiet.endpoints().control[0]);
  CHECK(test::control(quiet_control, {{"cmd", "status"}})["endpoints"]["metrics"] == "");
}

namespace {

// A TCP connection to host:port that sends nothing until asked (an idle or hostile client).
class RawConnection {
 public:
  explicit RawConnection(const std::string& address) {
    const auto colon = address.rfind(':');
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
    ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &to.sin_addr);
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(::connect(fd_, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0);
    const timeval timeout{20, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  void send(const std::string& bytes) const {
    REQUIRE(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(bytes.size()));
  }
  /// Everything the server sends until it closes the connection (or 20 s pass).
  std::string read_to_end() const {
    std::string out;
    std::array<char, 4096> buffer{};
    for (;;) {
      const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
      if (n <= 0) return out;
      out.append(buffer.data(), static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_ = -1;
};

}  // namespace

TEST_CASE(
    "metrics server: connections past the limit get 503 and are closed; others still served") {
  metrics::HttpServer server(
      "127.0.0.1:0", [] { return std::string("up 1\n"); }, 3);
  const std::string& address = server.bound_address();
  const std::string get = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

  // Three idle connections fill the server; a request on one of them is still answered.
  std::vector<std::unique_ptr<RawConnection>> idle;
  idle.reserve(3);
  for (int i = 0; i < 3; ++i) idle.push_back(std::make_unique<RawConnection>(address));
  // The fourth is accepted after the three (one accept at a time, in order) and refused.
  const RawConnection over(address);
  const std::string refused = over.read_to_end();
  CHECK(refused ==
        "HTTP/1.1 503 Service Unavailable\r\nServer: reflectd\r\nContent-Type: text/plain; "
        "charset=utf-8\r\nContent-Length: 33\r\nConnection: close\r\n\r\n"
        "too many connections to /metrics\n");
  idle[0]->send(get);
  const std::string served = idle[0]->read_to_end();
  CHECK_THAT(served, Catch::StartsWith("HTTP/1.1 200 OK") && Catch::EndsWith("up 1\n"));

  // The answered connection closed (Connection: close), so a slot is free: a new client is
  // served. The server notices the close asynchronously: retry until it has (bounded).
  std::string next;
  for (int attempt = 0; attempt < 200; ++attempt) {
    const RawConnection fresh(address);
    fresh.send(get);
    next = fresh.read_to_end();
    if (next.rfind("HTTP/1.1 200", 0) == 0) break;
  }
  CHECK_THAT(next, Catch::StartsWith("HTTP/1.1 200 OK"));
  CHECK_THROWS_WITH(metrics::HttpServer(
                        "127.0.0.1:0", [] { return std::string(); }, 0),
                    "metrics: max_connections must be >= 1");
}
