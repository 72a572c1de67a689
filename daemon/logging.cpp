#include "daemon/logging.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cstdlib>

namespace reflectd::daemon {
namespace {

// "%*" prints the sd-daemon(3) priority prefix that journald reads from stderr.
class SyslogPriorityFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm& /*time*/,
              spdlog::memory_buf_t& dest) override {
    // trace, debug, info, warn, error, critical, off -> syslog priorities.
    static constexpr std::array<const char*, 7> kPrefix{"<7>", "<7>", "<6>", "<4>",
                                                        "<3>", "<2>", "<6>"};
    const std::string_view prefix = kPrefix[static_cast<std::size_t>(msg.level)];
    dest.append(prefix.data(), prefix.data() + prefix.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<SyslogPriorityFlag>();
  }
};

}  // namespace

void setup_logging() {
  auto logger = spdlog::stderr_logger_mt("reflectd");
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (std::getenv("JOURNAL_STREAM") != nullptr) {
    formatter->add_flag<SyslogPriorityFlag>('*').set_pattern("%*%v");
  } else {
    formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l: %v");
  }
  logger->set_formatter(std::move(formatter));
  spdlog::set_default_logger(logger);
}

}  // namespace reflectd::daemon
