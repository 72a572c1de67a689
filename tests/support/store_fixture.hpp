#pragma once
// What the store tests share (tests/store/): an event record, a write entry and a request
// submitted to a writer and awaited.

#include <sqlite3.h>
#include <sys/stat.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <regex>
#include <thread>

#include "bus/event_decoder.hpp"
#include "store/database.hpp"
#include "store/event_store.hpp"
#include "store/fts_index.hpp"
#include "store/sqlite_library.hpp"
#include "store/vacuum.hpp"
#include "store/write_gate.hpp"
#include "store/writer.hpp"
#include "support/earlier_database.hpp"
#include "support/temp_dir.hpp"

namespace reflectd::test::store_fixture {

inline store::EventRecord event(const std::string& uid, const std::string& content) {
  FakeClock clock;
  bus::EventDecoder decoder(clock);
  auto message = decoder.decode(
      R"({"kind":"task","id":")" + uid + R"(","content":")" + content + R"(","tags":["t"]})",
      1 << 20);
  return *message.events.at(0).event;
}

inline store::EventEntry entry(const std::string& uid, const std::string& content,
                               std::size_t index = 0) {
  store::EventEntry e;
  e.index = index;
  e.id = uid;
  e.event = event(uid, content);
  return e;
}

// Submits `entries` as one request and returns the writer's answer, which comes after the
// COMMIT of the group that stored them.
inline store::WriteResult submit_and_wait(store::Writer& writer,
                                          std::vector<store::EventEntry> entries) {
  std::promise<store::WriteResult> done;
  store::WriteRequest request;
  request.entries = std::move(entries);
  request.on_done = [&done](store::WriteResult&& result) { done.set_value(std::move(result)); };
  const bool accepted = writer.submit(std::move(request));
  REQUIRE(accepted);
  return done.get_future().get();
}

}  // namespace reflectd::test::store_fixture
