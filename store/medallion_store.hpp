#pragma once
// The medallion tables (seed 001 `medallions`, with its scope rows medallion_scopes,
// medallion_nodes, medallion_tags and the earlier versions in medallion_history): one writer
// for the medallion job (jobs/medallion.hpp) and for agents' medallions
// (memory_ops/medallions.hpp).
//
// Thread-safety: none (the connection's thread). Errors: SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace reflectd::store {

/// Stores `medallion` (a seed 001 Medallion the caller validated) as the current version of
/// meta.medallion_id. When `previous_content` is not empty (the row's content_json before),
/// it first goes to medallion_history as version max(version) + 1. The row's status is
/// meta.status, its scope rows are replaced by the medallion's scope, and medallion_scopes
/// gets (`ns`, `config_hash`): the namespace whose readers see the medallion and what built
/// it (the job's scope hash, or kAgentConfigHash for an agent's medallion). Returns the history
/// version the previous content got (0 when there was none). medallion_scopes.config_hash of an
/// agent's medallion (memory_ops/medallions.hpp): new events mark every other medallion of their
/// namespace stale (store/event_store.hpp).
inline constexpr const char* kAgentConfigHash = "agent";

std::int64_t put_medallion(SQLite::Database& db, const nlohmann::json& medallion,
                           const std::string& ns, const std::string& config_hash,
                           const std::string& previous_content);

}  // namespace reflectd::store
