#include "common/zcert.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace reflectd {
namespace {

constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

std::string error_text(int err) { return std::strerror(err); }

// ZPL (rfc.zeromq.org/spec/4): 4-space indentation per level, "name = value" with an optional
// quoted value, '#' comments. Only what certificates use: nested names and string values.
std::map<std::string, std::string> parse_zpl(const std::string& path, std::istream& in) {
  std::map<std::string, std::string> values;
  std::vector<std::string> stack;
  std::string line;
  int number = 0;
  const auto fail = [&](const std::string& what) {
    throw std::runtime_error(path + ":" + std::to_string(number) + ": " + what);
  };
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#') continue;
    if (first % 4 != 0) fail("indentation must be a multiple of 4 spaces (ZPL)");
    const std::size_t depth = first / 4;
    if (depth > stack.size()) fail("indented deeper than its parent (ZPL)");
    stack.resize(depth);
    std::string body = line.substr(first);
    const auto eq = body.find('=');
    std::string name = body.substr(0, eq);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (name.empty()) fail("expected a name");
    std::string full;
    for (const auto& part : stack) full += part + "/";
    full += name;
    if (eq == std::string::npos) {
      stack.push_back(name);
      continue;
    }
    std::string value = body.substr(eq + 1);
    const auto start = value.find_first_not_of(' ');
    value = start == std::string::npos ? std::string{} : value.substr(start);
    if (!value.empty() && (value.front() == '"' || value.front() == '\'')) {
      const char quote = value.front();
      const auto end = value.find(quote, 1);
      if (end == std::string::npos) fail("unterminated quoted value");
      value = value.substr(1, end - 1);
    } else {
      const auto hash = value.find('#');
      if (hash != std::string::npos) value.resize(hash);
      while (!value.empty() && value.back() == ' ') value.pop_back();
    }
    values[full] = value;
    stack.push_back(name);
  }
  return values;
}

std::string cert_text(const CurveCert& cert, bool secret) {
  std::ostringstream out;
  if (secret) {
    out << "#   ZeroMQ CURVE **Secret** Certificate\n"
           "#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.\n";
  } else {
    out << "#   ZeroMQ CURVE Public Certificate\n"
           "#   Exchange securely, or use a secure mechanism to verify the contents\n"
           "#   of this file after exchange.\n";
  }
  out << "#   Written by reflectctl keygen\n\nmetadata\ncurve\n    public-key = \""
      << cert.public_key << "\"\n";
  if (secret) out << "    secret-key = \"" << cert.secret_key << "\"\n";
  return out.str();
}

void write_file(const std::string& path, const std::string& text, mode_t mode) {
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) throw std::runtime_error("cannot create " + temp + ": " + error_text(errno));
  // open() applies the umask; the mode is part of the promise, so set it exactly.
  bool ok = ::fchmod(fd, mode) == 0;
  std::size_t done = 0;
  while (ok && done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok || ::rename(temp.c_str(), path.c_str()) != 0) {
    const int rename_err = ok ? errno : err;
    ::unlink(temp.c_str());
    throw std::runtime_error("cannot write " + path + ": " + error_text(rename_err));
  }
}

}  // namespace

bool is_z85_key(std::string_view key) {
  if (key.size() != 40) return false;
  for (const char c : key) {
    if (kZ85Alphabet.find(c) == std::string_view::npos) return false;
  }
  return true;
}

CurveCert generate_cert() {
  if (zmq_has("curve") == 0) throw std::runtime_error("libzmq was built without CURVE support");
  std::array<char, 41> pub{};
  std::array<char, 41> sec{};
  if (zmq_curve_keypair(pub.data(), sec.data()) != 0) {
    throw std::runtime_error(std::string("zmq_curve_keypair failed: ") + zmq_strerror(zmq_errno()));
  }
  return {pub.data(), sec.data()};
}

CurveCert read_cert(const std::string& path, bool need_secret) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read CURVE certificate " + path + ": " + error_text(errno));
  const auto values = parse_zpl(path, in);
  CurveCert cert;
  if (const auto it = values.find("curve/public-key"); it != values.end())
    cert.public_key = it->second;
  if (const auto it = values.find("curve/secret-key"); it != values.end())
    cert.secret_key = it->second;
  if (cert.public_key.empty()) {
    throw std::runtime_error(path +
                             ": no curve/public-key (a ZeroMQ certificate reads: curve, then "
                             "    public-key = \"<40 Z85 characters>\")");
  }
  if (!is_z85_key(cert.public_key)) {
    throw std::runtime_error(path + ": curve/public-key must be 40 Z85 characters");
  }
  if (need_secret && cert.secret_key.empty()) {
    throw std::runtime_error(path +
                             ": no curve/secret-key: this is a public certificate; the "
                             "secret one is the file without .pub");
  }
  if (!cert.secret_key.empty()) {
    if (!is_z85_key(cert.secret_key)) {
      throw std::runtime_error(path + ": curve/secret-key must be 40 Z85 characters");
    }
    std::array<char, 41> derived{};
    if (zmq_curve_public(derived.data(), cert.secret_key.c_str()) != 0 ||
        cert.public_key != derived.data()) {
      throw std::runtime_error(path + ": curve/public-key does not belong to curve/secret-key");
    }
  }
  return cert;
}

void write_cert_pair(const std::string& path, const CurveCert& cert, bool force) {
  const std::string pub = path + ".pub";
  if (!force) {
    for (const auto& p : {path, pub}) {
      if (std::filesystem::exists(p)) {
        throw std::runtime_error(p + " exists; not overwriting a key (use --force)");
      }
    }
  }
  write_file(path, cert_text(cert, true), 0600);
  write_file(pub, cert_text(cert, false), 0644);
}

}  // namespace reflectd
