#pragma once
// Chat spellings written out in standard words, so that a fact distilled from a conversation
// turn reads as prose and a question asked in standard words finds it: "my fam" -> "my
// family", "I wanna start" -> "I want to start" (the verb after it then conjugates: "Jon wants
// to start"), "livin'" -> "living". docs/JOBS.md ("Facts") lists the spellings.
//
// Thread-safety: pure, no shared state. Errors: none; text without a chat spelling comes back
// unchanged.

#include <string>
#include <string_view>

namespace reflectd::text {

/// `text` with each chat spelling (a whole word, ASCII case-insensitive; the straight or curly
/// apostrophe of "'em", "'cause" and a dropped g) replaced by its standard form. A replaced
/// word keeps the case of its first letter; every other byte is kept as written.
std::string standard_spelling(std::string_view text);

}  // namespace reflectd::text
