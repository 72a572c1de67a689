#pragma once
// Loads the real event streams of ../shared/data into a database through the real decoder and
// writer, for job tests that need the data but not the sockets.

#include <fstream>
#include <future>
#include <stdexcept>
#include <string>
#include <vector>

#include "bus/event_decoder.hpp"
#include "common/clock.hpp"
#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "store/writer.hpp"

namespace reflectd::test {

/// Stores `lines` (one event each, wire format) in `path` in messages of 1,000; returns events
/// stored.
inline std::size_t load_lines(const std::string& path, const std::vector<std::string>& lines,
                              const Clock& clock) {
  store::WriterOptions options;
  options.database = {path, "normal", 5000};
  options.profiles = daemon::decay_profiles(config::defaults().decay);
  store::Writer writer(options, clock);
  bus::EventDecoder decoder(clock);
  std::size_t stored = 0;
  store::WriteRequest request;
  auto flush = [&] {
    std::promise<store::WriteResult> done;
    auto future = done.get_future();
    request.on_done = [&](store::WriteResult&& result) { done.set_value(std::move(result)); };
    if (!writer.submit(std::move(request), true)) throw std::runtime_error("writer refused");
    for (const auto& r : future.get().results) stored += r.status == store::EventStatus::kStored;
    request = {};
  };
  for (const auto& line : lines) {
    auto message = decoder.decode(line, 1 << 20);
    request.entries.push_back(std::move(message.events.at(0)));
    if (request.entries.size() == 1000) flush();
  }
  if (!request.entries.empty()) flush();
  return stored;
}

/// The lines of one file in ../shared/data.
inline std::vector<std::string> corpus_lines(const std::string& name) {
  std::ifstream in(std::string(REFLECTD_DATA_DIR) + "/" + name);
  if (!in) throw std::runtime_error("cannot open " + name);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(std::move(line));
  return lines;
}

/// Stores every line of the named files (in ../shared/data) in `path`; returns events stored.
inline std::size_t load_corpus(const std::string& path, const std::vector<std::string>& files,
                               const Clock& clock) {
  std::size_t stored = 0;
  for (const auto& name : files) stored += load_lines(path, corpus_lines(name), clock);
  return stored;
}

/// True in the ASan + UBSan and TSan trees (tests/CMakeLists.txt defines REFLECTD_SANITIZED).
#ifdef REFLECTD_SANITIZED
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

/// Lines of each file load_history_corpus() stores in a sanitized tree: the sanitizers run the
/// jobs 5-20x slower, and what they look for (memory and thread errors) does not depend on the
/// history's length. The release suite stores every line, and its figures are asserted there.
inline constexpr std::size_t kSanitizedCorpusLines = 1200;

/// What load_history_corpus() stores of libzmq's history (8,604 commits), and of swe-agent's
/// 448 events and libzmq's history together, in this tree.
inline constexpr std::size_t kLibzmqEvents = kSanitized ? kSanitizedCorpusLines : 8604;
inline constexpr std::size_t kHistoryEvents = 448 + kLibzmqEvents;

/// load_corpus(), limited to the first kSanitizedCorpusLines lines of each file in a sanitized
/// tree. Returns the events stored.
inline std::size_t load_history_corpus(const std::string& path,
                                       const std::vector<std::string>& files, const Clock& clock) {
  std::size_t stored = 0;
  for (const auto& name : files) {
    std::vector<std::string> lines = corpus_lines(name);
    if (kSanitized && lines.size() > kSanitizedCorpusLines) lines.resize(kSanitizedCorpusLines);
    stored += load_lines(path, lines, clock);
  }
  return stored;
}

}  // namespace reflectd::test
