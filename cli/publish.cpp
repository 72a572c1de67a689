#include "cli/publish.hpp"

#include <algorithm>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "cli/ack_sender.hpp"
#include "cli/exit_codes.hpp"
#include "cli/push_sender.hpp"
#include "cli/socket.hpp"
#include "cli/summary.hpp"

namespace reflectd::cli {
namespace {

// `publish --push EP` reads EP as a file; say how to write what was meant.
std::string endpoint_hint(const std::vector<std::string>& files) {
  for (const auto& file : files) {
    if (file.find("://") != std::string::npos) {
      return "\n(" + file +
             " looks like an endpoint: give it with --push-endpoint, or with "
             "--push before `publish`)";
    }
  }
  return "";
}

void send_all(const PublishOptions& options, zmq::socket_t& socket, LineReader& reader,
              Summary& summary) {
  MessageBuilder builder(reader, options.batch);
  Progress progress(stderr_is_terminal(), reader.total_bytes());
  if (options.push) {
    push_all(socket, builder, reader.names(), {options.timeout, options.retries}, summary,
             progress);
  } else {
    AckSender sender(socket, builder, reader.names(),
                     {options.window, options.timeout, options.retries}, summary, progress);
    sender.run();
  }
  progress.finish();
}

void print_summary(const PublishOptions& options, const Summary& summary) {
  if (options.json) {
    std::cout << summary_json(summary).dump(2) << '\n';
  } else if (summary.reached) {
    std::cout << format_summary(summary);
  }
}

}  // namespace

int run_publish(const PublishOptions& options) {
  std::unique_ptr<LineReader> reader;
  try {
    reader = std::make_unique<LineReader>(options.files);
  } catch (const std::runtime_error& error) {
    std::cerr << "reflectctl publish: " << error.what() << endpoint_hint(options.files) << '\n';
    return kExitUsage;
  }
  Summary summary;
  summary.push = options.push;
  summary.endpoint = options.endpoint;
  summary.files = reader->names().size();

  const auto start = std::chrono::steady_clock::now();
  zmq::context_t context(1);
  // Push has no replies to wait for: linger is how long queued messages get to leave.
  const SocketOptions socket_options{
      static_cast<int>(std::max<std::size_t>(options.window * 2, 1000)),
      options.push ? options.timeout : std::chrono::milliseconds(1000), options.curve};
  zmq::socket_t socket;
  try {
    socket =
        connect_socket(context, options.push ? zmq::socket_type::push : zmq::socket_type::dealer,
                       options.endpoint, socket_options);
  } catch (const std::runtime_error& error) {
    std::cerr << "reflectctl publish: " << error.what() << '\n';
    return kExitUsage;
  }
  if (wait_writable(socket, options.timeout)) {
    send_all(options, socket, *reader, summary);
  } else {
    summary.reached = false;
    std::cerr << "reflectctl publish: no connection to " << options.endpoint << " within "
              << options.timeout.count() << " ms; is reflectd running there?\n";
  }
  summary.elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  print_summary(options, summary);
  return exit_status(summary);
}

}  // namespace reflectd::cli
