#include "http/rate_limiter.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace reflectd::http {

RateLimiter::RateLimiter(const Clock& clock, double rate_per_s, std::int64_t burst)
    : clock_(clock), rate_per_s_(rate_per_s), burst_(static_cast<double>(burst)) {
  if (rate_per_s < 0 || (rate_per_s > 0 && burst < 1)) {
    throw std::invalid_argument("rate limit: rate_per_s must be >= 0 and burst >= 1");
  }
}

std::int64_t RateLimiter::admit(std::string_view client) {
  if (rate_per_s_ == 0) return 0;
  const std::int64_t now = clock_.monotonic_us();
  auto it = buckets_.find(client);
  if (it == buckets_.end()) {
    if (buckets_.size() >= kMaxClients) prune(now);
    it = buckets_.emplace(std::string(client), Bucket{burst_, now}).first;
  }
  Bucket& bucket = it->second;
  const double elapsed_s = static_cast<double>(now - bucket.at_us) / 1e6;
  bucket.tokens = std::min(burst_, bucket.tokens + elapsed_s * rate_per_s_);
  bucket.at_us = now;
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return 0;
  }
  return std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::ceil((1 - bucket.tokens) / rate_per_s_)));
}

// A full bucket is the same as none: dropping it changes no answer.
void RateLimiter::prune(std::int64_t now_us) {
  std::erase_if(buckets_, [&](const auto& entry) {
    const Bucket& b = entry.second;
    return b.tokens + static_cast<double>(now_us - b.at_us) / 1e6 * rate_per_s_ >= burst_;
  });
}

}  // namespace reflectd::http
