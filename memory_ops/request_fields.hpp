#pragma once
// The text fields of the memory operations' requests (revise, proposal, merge_entities), one
// rule for all: present, a JSON string, not blank, at most a byte limit, without NUL.

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace reflectd::memory_ops {

/// The byte limit of every operation's `rationale` (revise, proposal, merge_entities, medallion
/// edits): it is kept in the audit log and shown whole, so a paragraph, not a document.
inline constexpr std::size_t kMaxRationaleBytes = 4096;

/// The string `field` of `request`. On a missing, non-string, blank (only spaces, tabs and
/// line breaks), oversized (> max_bytes bytes) or NUL-containing value, returns "" and sets
/// `error` to "<cmd>: <field>: <rule>". Thread-safe (pure).
std::string required_text(const nlohmann::json& request, const char* cmd, const char* field,
                          std::size_t max_bytes, std::string& error);

}  // namespace reflectd::memory_ops
