#pragma once
// The receiving end of sd_notify() for the tests that run the real binary as a Type=notify
// service would (daemon_lifecycle_test, watchdog_test), and the reading of its datagrams.
//
// Error policy: the constructor throws std::system_error (or std::runtime_error for a path
// longer than sun_path); next() returns std::nullopt on timeout.
// Thread-safety: next(), next_with() and history() from one test thread; a reader thread of
// its own receives.

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

namespace reflectd::test {

// The lines of a notification datagram ("READY=1\nSTATUS=...").
inline std::vector<std::string_view> lines_of(std::string_view datagram) {
  std::vector<std::string_view> lines;
  while (!datagram.empty()) {
    const auto end = std::min(datagram.find('\n'), datagram.size());
    lines.push_back(datagram.substr(0, end));
    datagram.remove_prefix(std::min(end + 1, datagram.size()));
  }
  return lines;
}

inline bool has_line(std::string_view datagram, std::string_view line) {
  const auto lines = lines_of(datagram);
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// The value of "KEY=value" in a datagram, if present.
inline std::optional<std::string> field(std::string_view datagram, std::string_view key) {
  for (const std::string_view line : lines_of(datagram)) {
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == '=') {
      return std::string(line.substr(key.size() + 1));
    }
  }
  return std::nullopt;
}

// The receiving end of sd_notify(): an AF_UNIX datagram socket bound to a path, as systemd
// creates for a Type=notify service.
class NotifySocket {
 public:
  explicit NotifySocket(std::string path) : path_(std::move(path)) {
    sockaddr_un address{};
    if (path_.size() >= sizeof(address.sun_path))
      throw std::runtime_error("path too long: " + path_);
    // CLOEXEC: the daemon must not inherit the receiving end.
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
    if (::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      const int error = errno;
      ::close(fd_);
      throw std::system_error(error, std::generic_category(), "bind " + path_);
    }
    // Read all the time, as systemd does: sd_notify() blocks the daemon's event loop once
    // max_dgram_qlen (512) datagrams wait, which a slow (sanitized) run reached in the
    // SIGTERM test with STATUS= every 100 ms.
    reader_ = std::thread([this] {
      while (!stop_.load()) {
        pollfd item{fd_, POLLIN, 0};
        if (::poll(&item, 1, 20) <= 0) continue;
        std::array<char, 4096> buffer{};
        const ssize_t size = ::recv(fd_, buffer.data(), buffer.size(), MSG_DONTWAIT);
        if (size <= 0) continue;
        {
          std::lock_guard lock(mutex_);
          history_.emplace_back(buffer.data(), static_cast<std::size_t>(size));
        }
        arrived_.notify_all();
      }
    });
  }
  ~NotifySocket() {
    stop_ = true;
    reader_.join();
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  const std::string& path() const { return path_; }

  /// Waits up to `timeout` for the next datagram after those already returned that satisfies
  /// `matches`; the ones skipped stay in history().
  std::optional<std::string> next(const std::function<bool(const std::string&)>& matches,
                                  std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock lock(mutex_);
    for (;;) {
      while (cursor_ < history_.size()) {
        const std::string& datagram = history_[cursor_++];
        if (matches(datagram)) return datagram;
      }
      if (arrived_.wait_until(lock, deadline) == std::cv_status::timeout &&
          cursor_ == history_.size()) {
        return std::nullopt;
      }
    }
  }

  /// next() for a datagram with the line `line` (e.g. "READY=1").
  std::optional<std::string> next_with(std::string_view line, std::chrono::milliseconds timeout) {
    return next([line](const std::string& d) { return has_line(d, line); }, timeout);
  }

  /// Every datagram received so far, joined for failure messages.
  std::string history() const {
    std::lock_guard lock(mutex_);
    std::string out;
    for (const auto& datagram : history_) out += "[" + datagram + "]\n";
    return out;
  }

 private:
  std::string path_;
  int fd_ = -1;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<std::string> history_;  // guarded by mutex_
  std::size_t cursor_ = 0;            // guarded by mutex_
  std::atomic<bool> stop_{false};
  std::thread reader_;  // last: starts after the members it uses exist
};

}  // namespace reflectd::test
