#include "support/process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <csignal>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include "support/temp_dir.hpp"

extern char** environ;

namespace reflectd::test {
namespace {

using Clock = std::chrono::steady_clock;

ExitStatus decode(int wait_status) {
  if (WIFEXITED(wait_status)) return {WEXITSTATUS(wait_status), 0};
  if (WIFSIGNALED(wait_status)) return {-1, WTERMSIG(wait_status)};
  return {};
}

// posix_spawn_file_actions_t with RAII, so an early throw cannot leak it.
class FileActions {
 public:
  FileActions() { ::posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { ::posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;

  void open(int fd, const std::string& path, int flags) {
    ::posix_spawn_file_actions_addopen(&actions_, fd, path.c_str(), flags, 0644);
  }
  const posix_spawn_file_actions_t* get() const { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_{};
};

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) throw std::invalid_argument("ChildProcess: empty argv");
  FileActions actions;
  actions.open(STDIN_FILENO, options.stdin_path.empty() ? "/dev/null" : options.stdin_path,
               O_RDONLY);
  constexpr int kWrite = O_WRONLY | O_CREAT | O_TRUNC;
  if (!options.stdout_path.empty()) actions.open(STDOUT_FILENO, options.stdout_path, kWrite);
  if (!options.stderr_path.empty()) actions.open(STDERR_FILENO, options.stderr_path, kWrite);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const int error = ::posix_spawn(&pid_, args[0], actions.get(), nullptr, args.data(), environ);
  if (error != 0) {
    pid_ = -1;
    throw std::system_error(error, std::generic_category(), "posix_spawn " + argv[0]);
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    reap_now();
  }
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), status_(std::exchange(other.status_, std::nullopt)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    ChildProcess discarded(std::move(*this));  // Kills and reaps what this held.
    pid_ = std::exchange(other.pid_, -1);
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

void ChildProcess::reap_now() {
  int wait_status = 0;
  while (::waitpid(pid_, &wait_status, 0) < 0 && errno == EINTR) {
  }
  status_ = decode(wait_status);
}

bool ChildProcess::running() {
  if (pid_ <= 0 || status_) return false;
  int wait_status = 0;
  const pid_t done = ::waitpid(pid_, &wait_status, WNOHANG);
  if (done == pid_) status_ = decode(wait_status);
  return !status_;
}

std::optional<ExitStatus> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  wait_until([this] { return !running(); }, timeout, std::chrono::milliseconds(5));
  return status_;
}

void ChildProcess::send_signal(int signal) {
  if (running()) ::kill(pid_, signal);
}

RunResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                      const std::string& stdin_path) {
  const TempDir scratch;
  const std::string out_path = scratch.file("stdout");
  const std::string err_path = scratch.file("stderr");
  RunResult result;
  {
    ChildProcess child(argv, {stdin_path, out_path, err_path});
    if (const auto status = child.wait_for(timeout)) {
      result.status = *status;
    } else {
      result.timed_out = true;
      child.send_signal(SIGKILL);
      result.status = child.wait_for(std::chrono::seconds(5)).value_or(ExitStatus{});
    }
  }
  result.out = read_text_file(out_path);
  result.err = read_text_file(err_path);
  return result;
}

bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds interval) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (Clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(interval);
  }
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text_file(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace reflectd::test
