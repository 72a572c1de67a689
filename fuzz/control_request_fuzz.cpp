// Fuzz target: control-socket requests through bus::parse_control_request() (what the bus
// calls for every message on `control`) and the parameter readers the daemon's commands use.
// Checks: refusals carry a "request: ..." message; an accepted request is a JSON object
// that survives dump/parse; limits are in [1, 10000]; the FTS5 query built from `text` is
// only double-quoted words (no user text reaches FTS5 syntax).

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "bus/control_request.hpp"
#include "fuzz/fuzz_check.hpp"
#include "model/request_params.hpp"
#include "text/fts_query.hpp"

namespace {

void check_fts_query(const std::string& query) {
  bool inside = false;
  for (std::size_t i = 0; i < query.size(); ++i) {
    const char c = query[i];
    if (c == '"') {
      inside = !inside;
      continue;
    }
    if (!inside) {
      FUZZ_CHECK(c == ' ', "'%c' outside quotes in %s", c, query.c_str());
    } else {
      const auto byte = static_cast<unsigned char>(c);
      FUZZ_CHECK(std::isalnum(byte) != 0 || (byte & 0x80) != 0 || c == '_',
                 "byte 0x%02x inside a word of %s", byte, query.c_str());
    }
  }
  FUZZ_CHECK(!inside, "unbalanced quotes in %s", query.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace reflectd::bus;
  using namespace reflectd::model;
  using reflectd::text::fts_query;
  const std::string_view payload(reinterpret_cast<const char*>(data), size);
  constexpr std::size_t kLimit = 1 << 20;

  const auto lone = parse_control_request(1, payload, kLimit);
  FUZZ_CHECK(lone.error == "request: expected [routing id, JSON]", "one frame accepted");
  if (size > 0) {
    const auto big = parse_control_request(2, payload, size - 1);
    FUZZ_CHECK(big.error == "request: larger than bus.max_message_bytes", "limit not enforced");
  }

  const auto parsed = parse_control_request(2, payload, kLimit);
  if (!parsed.error.empty()) {
    FUZZ_CHECK(parsed.error.starts_with("request: "), "error '%s'", parsed.error.c_str());
    FUZZ_CHECK(parsed.request.is_null(), "refused request carries a value");
    return 0;
  }
  const auto& request = parsed.request;
  FUZZ_CHECK(request.is_object(), "accepted request is not an object");
  // Replies quote requests back; dump must not throw on anything the parser accepted.
  const std::string text = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  FUZZ_CHECK(nlohmann::json::parse(text, nullptr, false) == request, "dump/parse round trip");

  for (const char* key : {"cmd", "job", "namespace", "phase", "status", "type", "kind", "text",
                          "id", "action", "agent_id"}) {
    const std::string value = text_param(request, key);
    const auto it = request.find(key);
    FUZZ_CHECK(value.empty() || (it != request.end() && *it == value), "text_param %s", key);
  }
  for (const char* key : {"limit", "top"}) {
    const int limit = limit_param(request, 20, key);
    FUZZ_CHECK(limit >= 1 && limit <= 10000, "%s = %d", key, limit);
  }
  for (const char* key : {"nodes", "tags"}) {
    const auto list = string_list(request, key);
    const auto it = request.find(key);
    FUZZ_CHECK(list.empty() || (it != request.end() && it->size() >= list.size()), "%s", key);
  }
  check_fts_query(fts_query(text_param(request, "text")));
  check_fts_query(fts_query(payload));
  return 0;
}
