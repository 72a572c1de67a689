#include <catch2/catch.hpp>

#include "common/clock.hpp"
#include "http/rate_limiter.hpp"

using reflectd::FakeClock;
using reflectd::http::RateLimiter;

TEST_CASE("rate limiter: a burst, then one request per 1/rate seconds, each client apart") {
  FakeClock clock;
  RateLimiter limiter(clock, 2.0, 3);
  CHECK(limiter.admit("a") == 0);
  CHECK(limiter.admit("a") == 0);
  CHECK(limiter.admit("a") == 0);
  // Empty: one token comes back in 0.5 s, answered as the whole second Retry-After allows.
  CHECK(limiter.admit("a") == 1);
  CHECK(limiter.admit("b") == 0);
  clock.advance_us(500'000);
  CHECK(limiter.admit("a") == 0);
  CHECK(limiter.admit("a") == 1);
  // Refills stop at the burst.
  clock.advance_us(60'000'000);
  for (int i = 0; i < 3; ++i) CHECK(limiter.admit("a") == 0);
  CHECK(limiter.admit("a") == 1);
}

TEST_CASE("rate limiter: a slow rate says how many seconds to wait") {
  FakeClock clock;
  RateLimiter limiter(clock, 0.1, 1);
  CHECK(limiter.admit("a") == 0);
  CHECK(limiter.admit("a") == 10);
  clock.advance_us(4'000'000);
  CHECK(limiter.admit("a") == 6);
}

TEST_CASE("rate limiter: rate 0 admits everything; invalid settings throw") {
  FakeClock clock;
  RateLimiter off(clock, 0, 1);
  for (int i = 0; i < 1000; ++i) REQUIRE(off.admit("a") == 0);
  CHECK(off.clients() == 0);
  CHECK_THROWS_AS(RateLimiter(clock, -1, 1), std::invalid_argument);
  CHECK_THROWS_AS(RateLimiter(clock, 1, 0), std::invalid_argument);
}

TEST_CASE("rate limiter: full buckets are dropped past the client limit") {
  FakeClock clock;
  RateLimiter limiter(clock, 1.0, 1);
  for (std::size_t i = 0; i < RateLimiter::kMaxClients; ++i) limiter.admit(std::to_string(i));
  CHECK(limiter.clients() == RateLimiter::kMaxClients);
  clock.advance_us(1'000'000);  // every bucket full again
  CHECK(limiter.admit("new") == 0);
  CHECK(limiter.clients() == 1);
}
