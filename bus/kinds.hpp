#pragma once
// Event kinds and sources of wire format v1: LedgerMind's (seed 000) plus SHODH's memory
// types and source types (seed 004).

#include <optional>
#include <string>
#include <string_view>

#include "store/event.hpp"

namespace reflectd::bus {

/// A canonical kind and its storage class.
struct KindInfo {
  std::string_view name;
  store::StorageClass storage_class;
};

/// Lower-cases `text` and turns CamelCase into snake_case ("CodeEdit" -> "code_edit",
/// "FILE_ACCESS" -> "file_access"), so SHODH's spellings match ours.
std::string normalise_enum_spelling(std::string_view text);

/// Looks up a kind in any accepted spelling; nullopt when unknown.
std::optional<KindInfo> find_kind(std::string_view text);

/// Canonical source name for any accepted spelling; nullopt when unknown.
std::optional<std::string_view> find_source(std::string_view text);

/// All canonical kinds, '|'-separated, for error messages and docs.
std::string_view kind_list();
/// All canonical sources, '|'-separated.
std::string_view source_list();

}  // namespace reflectd::bus
