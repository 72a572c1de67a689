// bench_ingest's HTTP modes (docs/HTTP.md), each against ZeroMQ in the same run:
//   http         acknowledged ingest over POST /v1/events against the ingest mode's DEALER
//                (--modes ingest,http prints its ratio to ingest): --window keep-alive
//                connections, each on its own thread, post --batch events a request and wait
//                for the reply (after the commit), as an HTTP client library does; a 503 (the
//                writer's queue full) is sent again.
//   recall-http  --preload events pushed, then the libzmq commit subjects asked as recall,
//                alternately over the control socket and POST /v1/recall on one keep-alive
//                connection, one at a time: each transport's p50 and p99 and the difference.

#include <simdjson.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <thread>

#include "bench/ingest_harness.hpp"
#include "common/free_tcp_port.hpp"

namespace reflectd::bench_ingest {
namespace {

namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = boost::asio::ip::tcp;

// Posts messages taken from `next` until `messages` are acknowledged; returns the events the
// replies say were stored or duplicates.
std::uint64_t post_messages(const std::string& port, const Corpus& corpus, const Options& options,
                            std::atomic<std::uint64_t>& next, std::uint64_t messages) {
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  stream.connect(tcp::resolver(io).resolve("127.0.0.1", port));
  simdjson::dom::parser parser;
  beast::flat_buffer buffer;
  std::uint64_t acknowledged = 0;
  for (std::uint64_t m = next++; m < messages; m = next++) {
    const std::uint64_t at = m * options.batch;
    bhttp::request<bhttp::string_body> request(bhttp::verb::post, "/v1/events", 11);
    request.set(bhttp::field::host, "127.0.0.1");
    request.set(bhttp::field::content_type, "application/json");
    request.keep_alive(true);
    request.body() = corpus.message(at, std::min(options.batch, options.events - at));
    request.prepare_payload();
    for (;;) {
      bhttp::write(stream, request);
      bhttp::response<bhttp::string_body> response;
      bhttp::read(stream, buffer, response);
      if (response.result_int() == 503) continue;  // the writer's queue is full: send again
      simdjson::dom::element body;
      if (parser.parse(response.body()).get(body)) {
        throw std::runtime_error("http: reply is not JSON: " + response.body());
      }
      for (simdjson::dom::element r : body["results"].get_array()) {
        const std::string_view status = r["status"].get_string().value();
        if (status == "stored" || status == "duplicate") ++acknowledged;
      }
      break;
    }
  }
  return acknowledged;
}

config::Config http_config(const Options& options, const fs::path& dir, const std::string& mode,
                           const std::string& port) {
  config::Config cfg = daemon_config(options, dir, mode);
  cfg.http.listen = "127.0.0.1:" + port;
  cfg.security.insecure = true;  // a loopback client without a token, as ZeroMQ's ipc peers
  cfg.http.rate_per_s = 0;
  return cfg;
}

double percentile_ms(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  return samples[static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1))];
}

}  // namespace

ModeResult run_recall_http(const Corpus& corpus, const Options& options, const fs::path& dir) {
  const std::string port = std::to_string(free_tcp_port());
  const config::Config cfg = http_config(options, dir, "recallhttp", port);
  // Every 43rd subject, as bench_recall's libzmq questions.
  const std::vector<std::string> questions = libzmq_questions(options.data_dir, 43, "recall-http");
  ModeResult result{"recall-http", 0, 0.0};
  std::vector<double> zmq_ms;
  std::vector<double> http_ms;
  {
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient control(context, cfg.bus.control.front());
    control.wait_ready();
    zmq::socket_t push = push_socket(context, cfg);
    const std::uint64_t events = std::min(options.events, options.preload);
    push_events(push, corpus, 0, events, options.batch);
    await_finished(control, events, nullptr, "recall-http preload");
    await_indexed(control);
    boost::asio::io_context io;
    beast::tcp_stream stream(io);
    stream.connect(tcp::resolver(io).resolve("127.0.0.1", port));
    beast::flat_buffer buffer;
    const auto start = std::chrono::steady_clock::now();
    for (const std::string& question : questions) {
      const nlohmann::json request = {{"text", question}, {"namespace", "libzmq"}, {"limit", 10}};
      auto sent = std::chrono::steady_clock::now();
      nlohmann::json command = request;
      command["cmd"] = "recall";
      const nlohmann::json reply = control.request(command);
      zmq_ms.push_back(Seconds(std::chrono::steady_clock::now() - sent).count() * 1e3);
      bhttp::request<bhttp::string_body> post(bhttp::verb::post, "/v1/recall", 11);
      post.set(bhttp::field::host, "127.0.0.1");
      post.set(bhttp::field::content_type, "application/json");
      post.keep_alive(true);
      post.body() = request.dump();
      post.prepare_payload();
      sent = std::chrono::steady_clock::now();
      bhttp::write(stream, post);
      bhttp::response<bhttp::string_body> response;
      bhttp::read(stream, buffer, response);
      http_ms.push_back(Seconds(std::chrono::steady_clock::now() - sent).count() * 1e3);
      if (!reply.value("ok", false) || response.result_int() != 200) {
        throw std::runtime_error("recall-http: a recall failed: " + response.body());
      }
    }
    result.seconds = Seconds(std::chrono::steady_clock::now() - start).count();
    result.stored = count_rows(cfg.store.path, cfg);
    if (!daemon.stop()) throw std::runtime_error("recall-http: the daemon did not exit cleanly");
  }
  result.expected = result.stored;
  result.paced = true;
  result.extra["recalls"] = questions.size();
  result.extra["zmq_p50_ms"] = percentile_ms(zmq_ms, 0.5);
  result.extra["zmq_p99_ms"] = percentile_ms(zmq_ms, 0.99);
  result.extra["http_p50_ms"] = percentile_ms(http_ms, 0.5);
  result.extra["http_p99_ms"] = percentile_ms(http_ms, 0.99);
  result.extra["http_minus_zmq_p50_ms"] = percentile_ms(http_ms, 0.5) - percentile_ms(zmq_ms, 0.5);
  remove_database(cfg.store.path);
  return result;
}

ModeResult run_http(const Corpus& corpus, const Options& options, const fs::path& dir) {
  const std::string port = std::to_string(free_tcp_port());
  const config::Config cfg = http_config(options, dir, "http", port);
  ModeResult result{"http", 0, 0.0};
  std::atomic<std::uint64_t> acknowledged{0};
  {
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient(context, cfg.bus.control.front()).wait_ready();
    const std::uint64_t messages = (options.events + options.batch - 1) / options.batch;
    std::atomic<std::uint64_t> next{0};
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> clients;
    std::atomic<bool> failed{false};
    for (std::uint64_t c = 0; c < std::max<std::uint64_t>(1, options.window); ++c) {
      clients.emplace_back([&] {
        try {
          acknowledged += post_messages(port, corpus, options, next, messages);
        } catch (const std::exception& error) {
          std::cerr << "http: " << error.what() << '\n';
          failed = true;
        }
      });
    }
    for (std::thread& t : clients) t.join();
    result.seconds = Seconds(std::chrono::steady_clock::now() - start).count();
    if (!daemon.stop()) throw std::runtime_error("http: the daemon did not exit cleanly");
    if (failed) throw std::runtime_error("http: a client failed");
  }
  result.stored = count_rows(cfg.store.path, cfg);
  if (acknowledged != result.stored) {
    std::cerr << "http: " << acknowledged << " events acknowledged but " << result.stored
              << " rows stored\n";
    result.stored = std::min<std::uint64_t>(acknowledged, result.stored);
  }
  remove_database(cfg.store.path);
  return result;
}

}  // namespace reflectd::bench_ingest
