// Checks the generated systemd unit with systemd's own tools, so a typo in a directive or a
// lost hardening line fails CI instead of surfacing on a production host.
//
// `systemd-analyze verify` refuses a unit whose ExecStart binary does not exist, and the
// installed path does not exist at build time, so the test verifies a copy whose ExecStart
// points at the freshly built daemon. systemd-analyze is a hard requirement (the README
// installs the `systemd` package): a missing tool fails the test rather than skipping it.

#include <catch2/catch.hpp>

#include <array>

#include <sys/wait.h>
#include <unistd.h>
#include <cstdlib>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#ifndef REFLECTD_UNIT_FILE
#error "REFLECTD_UNIT_FILE must name the configured reflectd.service"
#endif
#ifndef REFLECTD_BIN
#error "REFLECTD_BIN must name the built reflectd binary"
#endif

namespace {

namespace fs = std::filesystem;

// Exposure systemd rates "OK" or better; above it a hardening line was lost.
constexpr double kMaxExposure = 2.0;

struct CommandResult {
  int status = -1;
  std::string output;  // stdout and stderr interleaved
};

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

CommandResult run(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.output.append(buffer.data(), n);
  const int raw = ::pclose(pipe);
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return result;
}

std::string find_in_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "reflectd-unit-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The configured unit with ExecStart's program replaced by the built binary; the arguments
// (--config ...) stay as installed. The file keeps its name: systemd derives the unit name
// from it.
fs::path render_unit(const fs::path& dir) {
  std::ifstream in(REFLECTD_UNIT_FILE);
  REQUIRE(in.good());
  std::ostringstream out;
  std::string line;
  int exec_starts = 0;
  while (std::getline(in, line)) {
    if (line.starts_with("ExecStart=")) {
      ++exec_starts;
      const auto args = line.find(' ');
      REQUIRE(args != std::string::npos);
      INFO("installed " << line);
      CHECK(line.substr(0, args).ends_with("/reflectd"));
      CHECK(line.find("--config ") != std::string::npos);
      line = "ExecStart=" + std::string(REFLECTD_BIN) + line.substr(args);
    }
    out << line << '\n';
  }
  REQUIRE(exec_starts == 1);
  fs::path unit = dir / fs::path(REFLECTD_UNIT_FILE).filename();
  std::ofstream(unit) << out.str();
  return unit;
}

std::vector<std::string> lines_mentioning(const std::string& output, const std::string& needle) {
  std::vector<std::string> found;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(needle) != std::string::npos) found.push_back(line);
  }
  return found;
}

}  // namespace

TEST_CASE("the systemd unit passes systemd-analyze verify and security", "[systemd]") {
  const std::string analyze = find_in_path("systemd-analyze");
  if (analyze.empty()) {
    FAIL(
        "systemd-analyze not found in PATH: install the `systemd` package (see README) to "
        "check reflectd.service");
  }
  REQUIRE(fs::exists(REFLECTD_BIN));
  TempDir dir;
  const fs::path unit = render_unit(dir.path());
  const std::string name = unit.filename().string();

  SECTION("verify accepts it") {
    const CommandResult verify =
        run(shell_quote(analyze) + " --no-pager verify " + shell_quote(unit.string()));
    INFO("systemd-analyze verify output:\n" << verify.output);
    CHECK(verify.status == 0);
    CHECK(lines_mentioning(verify.output, name).empty());
  }

  SECTION("security rates its exposure OK or better") {
    const CommandResult security = run(
        shell_quote(analyze) + " --no-pager security --offline=yes " + shell_quote(unit.string()));
    INFO("systemd-analyze security output:\n" << security.output);
    REQUIRE(security.status == 0);
    std::smatch match;
    const std::regex overall(R"(Overall exposure level for \S+: ([0-9]+\.[0-9]+) (\S+))");
    REQUIRE(std::regex_search(security.output, match, overall));
    const double score = std::stod(match[1].str());
    std::cout << name << ": systemd-analyze security exposure " << match[1].str() << ' '
              << match[2].str() << " (limit " << kMaxExposure << ")\n";
    REQUIRE(score <= kMaxExposure);
  }
}
