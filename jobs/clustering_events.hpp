#pragma once
// The cluster job's reading of a chunk's events (jobs/clustering.hpp, steps 1 and 2): the
// events of a namespace after its watermark in seq order, a batch at a time, each with its
// episode's working directory as of that event; the pure per-event work (parsing, entity
// extraction and tokenizing) done on a batch by extract_batch(), which the chunk loop runs on
// a second thread; and the read-ahead a yielding chunk carries into the next.
//
// Thread-safety: an EventReader is used by the job's thread alone (its statement is on the
// job's connection); extract_batch() touches nothing but its batch and may run on any thread.
// Errors: SQLite::Exception from the statements.

#include <SQLiteCpp/SQLiteCpp.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "jobs/job_state.hpp"
#include "text/entity_extraction.hpp"

namespace reflectd::jobs::clustering {

/// Events per batch of the chunk loop: handing a batch to the worker costs a queue push and a
/// wake-up, and a yield carries at most two batches of reads into the next chunk.
inline constexpr std::size_t kBatchEvents = 64;

/// One event of a chunk, as read, and its extraction once extract_batch() has run.
struct ReadEvent {
  std::int64_t seq = 0;
  std::int64_t ts = 0;  ///< ts_us
  int sensitivity = 0;  ///< rank (store::sensitivity_rank)
  std::string kind;
  std::string content;
  std::optional<std::string> context;
  std::optional<std::string> entities;
  std::optional<std::string> relations;
  std::string agent;
  std::string episode;
  std::string shown_cwd;  ///< the working directory the content shows (working_directory())
  std::string cwd;        ///< the episode's working directory at this event
  text::Extraction extraction;
  /// The content's kept tokens (Tokenizer::scan of vectorized_text()), each ended by '\0'.
  std::string tokens;
  /// `extraction` and `tokens` are set (a yield may leave the rest of a batch without).
  bool extracted = false;
};

/// The pure per-event work (JSON parsing, entity extraction and tokenizing: ~19% of the job on
/// one thread), for the events of `batch` not extracted yet. Stemming and interning stay on
/// the job's thread (they share its caches), so the vectors are the same. Stops early once
/// `abandon` is set (the chunk yielded: the next chunk extracts the rest).
void extract_batch(std::vector<ReadEvent>& batch, const std::atomic<bool>& abandon);

class EventReader {
 public:
  /// `state` is the cluster job's (its "cwd:<episode>" keys); both must outlive the reader.
  EventReader(SQLite::Database& db, JobState& state);

  /// Forgets what the reader knows of the namespace before (working directories, read-ahead).
  void start_namespace();

  /// Starts a chunk of at most `chunk_events` events of `ns` after `watermark`: the events a
  /// yielding chunk before carried come first, the statement reads on after them.
  void start_chunk(const std::string& ns, std::int64_t watermark, std::int64_t chunk_events);

  /// Reads the next kBatchEvents events of the chunk (at most) into `batch`. Returns whether
  /// it read any; `more` becomes false after the statement's last row.
  bool read_batch(const std::string& ns, std::vector<ReadEvent>& batch, bool& more);

  /// Keeps the events a yielding chunk read but did not store (`current` from `stored` on,
  /// then `next`) ahead of any still carried, in seq order, for the next chunk.
  void carry(std::vector<ReadEvent>& current, std::size_t stored, std::vector<ReadEvent>& next);

  /// Ends the chunk: resets the statement (a WriteTransaction needs none on a row).
  void end_chunk();

  /// Stores event `e`'s working directory as its episode's, when the content shows a new one
  /// (job_state, in the chunk's transaction).
  void remember_working_directory(const std::string& ns, const ReadEvent& e);

 private:
  std::string& stored_cwd(const std::string& ns, const std::string& episode);

  JobState& state_;
  SQLite::Statement read_events_;
  std::unordered_map<std::string, std::string> episode_cwd_;  // as of the last event stored
  std::unordered_map<std::string, std::string> read_cwd_;     // as of the last event read
  std::deque<ReadEvent> carried_;  // read ahead by a chunk that yielded before storing them
};

}  // namespace reflectd::jobs::clustering
