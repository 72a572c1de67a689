#pragma once
// The web console's files (console/, installed in /usr/share/reflectd/console), served by the
// HTTP API at / and /console/NAME (docs/HTTP.md). The files of the directory are read once, at
// startup, into memory: a request names one of them or nothing, so no path a client sends
// reaches the file system. Each answer carries the headers a page of the daemon's own needs:
// Content-Security-Policy (scripts, styles and connections to the daemon itself only),
// X-Content-Type-Options: nosniff, X-Frame-Options: DENY.
//
// Error policy: load() throws std::runtime_error for a directory that exists but cannot be
// read; a missing directory is an empty set (the console is not installed). Thread-safety:
// immutable after load().

#include <map>
#include <string>
#include <string_view>

#include "http/server.hpp"

namespace reflectd::http {

class StaticFiles {
 public:
  /// The regular files directly in `dir` (not in subdirectories), by name.
  static StaticFiles load(const std::string& dir);

  /// The answer to GET `path` ("/" is index.html; "/console/NAME" a file), or nullptr when
  /// `path` is neither.
  const Response* find(std::string_view path) const;
  bool empty() const { return files_.empty(); }
  std::size_t size() const { return files_.size(); }

 private:
  std::map<std::string, Response, std::less<>> files_;
};

/// The Content-Type of a file by its extension (text/html for .html, …; application/octet-stream
/// for others).
std::string content_type_of(std::string_view name);

}  // namespace reflectd::http
