#pragma once
// The inverse of EventDecoder: an accepted event written back in wire format v1
// (docs/WIRE.md). decode(encode_event(e)) gives back `e` field for field, including the
// derived id (the fuzz targets check this on every accepted event), so a node that forwards
// an event (bus.forward: jetstream) and the replicas that consume it store the same record.
//
// Thread-safety: pure function. Errors: none for a record the decoder produced; the JSON
// fields it holds (context, tags, ...) were validated by the decoder and are parsed again
// here (nlohmann::json::parse_error on a hand-made record holding invalid JSON).

#include <nlohmann/json.hpp>

#include "store/event.hpp"

namespace reflectd::bus {

/// `event` as a wire-format object: every field the decoder reads, `timestamp` in RFC 3339
/// with microseconds, and `id` only when the client gave one (a derived id is derived again
/// from the same fields).
nlohmann::json encode_event(const store::EventRecord& event);

}  // namespace reflectd::bus
