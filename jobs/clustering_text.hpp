#pragma once
// The texts the cluster job reads of an event (jobs/clustering.hpp, steps 2 and 4): what it
// vectorizes and the summary it stores for a cluster's medoid. Pure functions of their
// arguments: thread-safe; none throws except std::bad_alloc.

#include <cstddef>
#include <string>
#include <string_view>

namespace reflectd::jobs::clustering {

/// Bytes of an event's content that are vectorized: the rest of a long paste rarely says
/// what the event is about and would make one event cost as much as hundreds.
inline constexpr std::size_t kMaxVectorizedBytes = std::size_t{16} * 1024;

/// The most bytes of a cluster's summary (docs/ENTITIES.md "Clustering").
inline constexpr std::size_t kSummaryBytes = 300;

/// A cluster's summary of its medoid's `text` (extractive): its lines trimmed of spaces,
/// tabs and carriage returns, blank ones left out, joined by one space, until the summary
/// holds kSummaryBytes or more; then cut to at most kSummaryBytes at a UTF-8 character
/// boundary (utf8_boundary). Empty for a blank text.
std::string summary_of(std::string_view text);

/// `text` without commit trailer lines ("Signed-off-by: Name <mail>", "Co-authored-by:",
/// "Reviewed-by:", "Acked-by:", "Reported-by:", "Tested-by:", "(cherry picked from", ASCII
/// case-insensitive, after leading spaces and tabs), which say who, not what, and would group
/// commits by author. Every line kept, the last one included, ends with '\n'.
std::string without_trailers(std::string_view text);

/// What the job vectorizes of an event's `content`: its first kMaxVectorizedBytes (a cut
/// may fall inside a UTF-8 sequence; the tokenizer skips the broken bytes) without trailers.
std::string vectorized_text(std::string_view content);

}  // namespace reflectd::jobs::clustering
