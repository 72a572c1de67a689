#include "bus/message_outcome.hpp"

namespace reflectd::bus {

std::vector<store::DeadLetter> dead_letters_for(const DecodedMessage& message,
                                                std::string_view payload, const std::string& label,
                                                std::int64_t now_us) {
  std::string reason = message.error;
  for (const auto& entry : message.events) {
    if (entry.event) continue;
    if (!reason.empty()) reason += "; ";
    if (message.batch) reason += "[" + std::to_string(entry.index) + "] ";
    reason += entry.error;
  }
  if (reason.empty()) return {};
  return {store::DeadLetter{std::string(payload), label, std::move(reason), now_us}};
}

void count_results(SocketEventCounts& counts, const store::WriteResult& result,
                   std::size_t dead_letters) {
  std::uint64_t stored = 0;
  std::uint64_t duplicate = 0;
  // A message refused whole (it does not parse) has no events: it counts once.
  std::uint64_t rejected =
      dead_letters + (result.results.empty() && !result.message_error.empty() ? 1 : 0);
  for (const store::EventResult& event : result.results) {
    if (event.status == store::EventStatus::kStored) {
      ++stored;
    } else if (event.status == store::EventStatus::kDuplicate) {
      ++duplicate;
    } else {
      ++rejected;
    }
  }
  counts.stored.fetch_add(stored, std::memory_order_relaxed);
  counts.duplicate.fetch_add(duplicate, std::memory_order_relaxed);
  counts.rejected.fetch_add(rejected, std::memory_order_relaxed);
}

}  // namespace reflectd::bus
