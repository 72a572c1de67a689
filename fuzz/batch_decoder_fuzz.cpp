// Fuzz target: whole ingest/push messages (a JSON object or an array of 1-1000 objects)
// through bus::EventDecoder. Checks the message shape (indexes, one of event/error per entry,
// batch bounds), that decoding is deterministic with a reused parser (the bus keeps one
// decoder for its lifetime), and that every accepted event of the batch re-validates.
// Seeds: arrays of consecutive lines of ../shared/data, built by scripts/fuzz.sh.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "bus/event_decoder.hpp"
#include "common/clock.hpp"
#include "fuzz/event_invariants.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const reflectd::FakeClock clock;
  static reflectd::bus::EventDecoder decoder(clock);
  const std::string_view payload(reinterpret_cast<const char*>(data), size);
  constexpr std::size_t kLimit = 1 << 20;

  const auto first = decoder.decode(payload, kLimit);
  reflectd::fuzz::check_message(decoder, first, payload, kLimit);

  const auto second = decoder.decode(payload, kLimit);
  FUZZ_CHECK(first.error == second.error && first.batch == second.batch &&
                 first.events.size() == second.events.size(),
             "decoding is not deterministic");
  for (std::size_t i = 0; i < first.events.size(); ++i) {
    const auto& a = first.events[i];
    const auto& b = second.events[i];
    FUZZ_CHECK(a.id == b.id && a.error == b.error && a.event.has_value() == b.event.has_value(),
               "entry %zu differs between two decodes", i);
    if (a.event) reflectd::fuzz::check_same_event(*a.event, *b.event);
  }
  return 0;
}
