#pragma once
// Child processes for end-to-end tests: spawn the real binaries (reflectd, reflectctl), wait
// for them with deadlines instead of fixed sleeps, and capture what they print.
//
// Error policy: failures to start a process throw std::system_error; waiting never throws.
// Thread-safety: a ChildProcess belongs to one thread. Every function here is otherwise
// independent (no shared state) and safe to call from any thread.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reflectd::test {

/// How a child process ended.
struct ExitStatus {
  int code = -1;   ///< Its exit() value, or -1 when a signal ended it.
  int signal = 0;  ///< The signal that ended it, or 0.
};

/// Where a child's standard streams go. An empty path means /dev/null for stdin and "inherit
/// the test's stream" for stdout and stderr. Output files are created or truncated.
struct SpawnOptions {
  std::string stdin_path;
  std::string stdout_path;
  std::string stderr_path;
};

/// A child process started with posix_spawn (argv[0] is the executable's path; the test's
/// environment is inherited). If it is still running when the object dies, it is killed
/// with SIGKILL and reaped, so a failing test never leaves a daemon behind.
class ChildProcess {
 public:
  /// Starts `argv`. Throws std::system_error when posix_spawn fails (e.g. no such file).
  explicit ChildProcess(const std::vector<std::string>& argv, const SpawnOptions& options = {});
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  /// True until the process has exited (reaps it without blocking when it has).
  bool running();

  /// Waits up to `timeout` for the process to exit; nullopt if it is still running.
  /// Once the process has exited, returns the same status on every call.
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);

  /// Sends `signal` (e.g. SIGTERM) if the process is still running.
  void send_signal(int signal);

 private:
  void reap_now();

  pid_t pid_ = -1;
  std::optional<ExitStatus> status_;
};

/// What run_process() observed.
struct RunResult {
  ExitStatus status;
  bool timed_out = false;  ///< The process was killed for outliving the timeout.
  std::string out;         ///< Everything written to stdout.
  std::string err;         ///< Everything written to stderr.
};

/// Runs `argv` to completion with stdout and stderr captured (through files in a private
/// temporary directory, so a chatty child can never block on a full pipe). `stdin_path`
/// feeds standard input ("" = /dev/null). A child still running after `timeout` is killed
/// with SIGKILL and reported with timed_out = true. Throws std::system_error if it cannot
/// start.
RunResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                      const std::string& stdin_path = "");

/// Calls `condition` every `interval` until it returns true or `timeout` has passed;
/// returns its last result. For readiness checks with a deadline instead of a fixed sleep.
bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds interval = std::chrono::milliseconds(20));

/// The whole content of `path` ("" when it cannot be read).
std::string read_text_file(const std::string& path);

/// Creates or replaces `path` with `text`. Throws std::runtime_error when it cannot.
void write_text_file(const std::string& path, std::string_view text);

}  // namespace reflectd::test
