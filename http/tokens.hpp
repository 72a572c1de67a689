#pragma once
// The HTTP API's bearer tokens (docs/HTTP.md): a YAML file of token hashes, each mapped to a
// principal with the rights of an authorized CURVE key (bus/security.hpp), so a token is
// admitted the way a key is:
//
//   tokens:
//     - sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
//       agent_id: planner
//       namespaces: [libzmq]          # or ["*"]
//       max_sensitivity: medium       # public|low|medium|high|hyper
//       admin: false                  # optional, default false
//
// The file holds no token: `printf %s "$TOKEN" | sha256sum` gives its line, so a leaked file
// grants nothing. A token is compared by the SHA-256 of what the client sends (a map lookup
// of a digest, which reveals nothing of a stored token's bytes through its timing).
//
// Error policy: load_file()/load_string() throw config::ConfigError "FILE:LINE:COL: rule"
// (startup and SIGHUP). Thread-safety: immutable after construction; find() may be called
// from any thread.

#include <map>
#include <string>
#include <string_view>

#include "bus/security.hpp"

namespace reflectd::http {

class Tokens {
 public:
  /// Parses and validates strictly (bus::load_principal_list): an entry's sha256 must be 64
  /// lowercase hex digits, each listed once.
  static Tokens load_file(const std::string& path);
  static Tokens load_string(std::string_view yaml, std::string_view origin);

  /// The principal a bearer token (as sent, not hashed) stands for, or nullptr. Its
  /// public_key holds "token:" and the first 12 hex digits of the hash, for logs.
  const bus::Principal* find(std::string_view token) const;
  std::size_t size() const { return by_hash_.size(); }

 private:
  std::map<std::string, bus::Principal, std::less<>> by_hash_;
};

/// True for 64 lowercase hex digits (a SHA-256 as sha256sum prints it).
bool is_sha256_hex(std::string_view text);

}  // namespace reflectd::http
