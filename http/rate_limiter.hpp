#pragma once
// Per-client request rate limit of the HTTP API: a token bucket per client (a bearer token's
// principal, or a loopback client's address), refilled at `rate_per_s` up to `burst`
// (the classic token bucket, e.g. RFC 2697's committed burst). A request takes one token;
// without one it is refused with the seconds until one is back (HTTP 429's Retry-After,
// RFC 9110 §10.2.3 and RFC 6585 §4).
//
// Thread-safety: none; the HTTP server's one thread owns it. Time from the injected Clock
// (monotonic), so tests drive it exactly.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/clock.hpp"

namespace reflectd::http {

class RateLimiter {
 public:
  /// `rate_per_s` 0 admits everything; otherwise > 0 with `burst` >= 1.
  RateLimiter(const Clock& clock, double rate_per_s, std::int64_t burst);

  /// 0 when `client` may make a request now (and takes a token); otherwise the whole seconds,
  /// at least 1, until it may.
  std::int64_t admit(std::string_view client);

  /// Buckets kept; buckets refilled to full are dropped once more than kMaxClients are kept.
  std::size_t clients() const { return buckets_.size(); }
  static constexpr std::size_t kMaxClients = 10000;

 private:
  struct Bucket {
    double tokens = 0;
    std::int64_t at_us = 0;  // monotonic time of `tokens`
  };
  void prune(std::int64_t now_us);

  const Clock& clock_;
  double rate_per_s_;
  double burst_;
  std::map<std::string, Bucket, std::less<>> buckets_;
};

}  // namespace reflectd::http
