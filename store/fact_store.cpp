#include "store/fact_store.hpp"
#include "store/bound_exec.hpp"

#include <SQLiteCpp/VariadicBind.h>

#include <algorithm>

namespace reflectd::store {

FactStore::FactStore(SQLite::Database& db)
    : db_(db),
      current_(db,
               "SELECT fact_id, valid_to_us FROM facts INDEXED BY facts_current_attribute "
               "WHERE namespace = ?1 AND entity_key = ?2 AND attribute_key = ?3 "
               "AND attribute_key IS NOT NULL AND is_stale = 0 ORDER BY fact_id DESC LIMIT 1"),
      supersede_(db, "UPDATE facts SET valid_to_us = ?2, is_stale = 1 WHERE fact_id = ?1"),
      insert_(db,
              "INSERT INTO facts (namespace, entity_key, entity_name, entity_type, attribute_key, "
              "fact_text, confidence, valid_from_us, valid_to_us, whole_days, source_seq, "
              "sentence_index, supersedes_fact_id, sensitivity) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"),
      link_(db,
            "INSERT OR IGNORE INTO fact_entity_links (fact_id, entity_key, entity_name, "
            "is_primary) VALUES (?1, ?2, ?3, ?4)") {}

std::int64_t FactStore::add(const FactRow& fact) {
  std::optional<std::int64_t> superseded;
  if (!fact.attribute.empty()) {
    current_.reset();
    current_.bind(1, fact.ns);
    current_.bind(2, fact.entity_key);
    current_.bind(3, fact.attribute);
    if (current_.executeStep()) {
      superseded = current_.getColumn(0).getInt64();
      std::int64_t end = fact.valid_from_us;
      if (!current_.isColumnNull(1)) end = std::min(end, current_.getColumn(1).getInt64());
      current_.reset();
      store::exec_bound(supersede_, *superseded, end);
    }
    current_.reset();
  }
  insert_.reset();
  insert_.bind(1, fact.ns);
  insert_.bind(2, fact.entity_key);
  insert_.bind(3, fact.entity_name);
  insert_.bind(4, fact.entity_type);
  if (fact.attribute.empty()) {
    insert_.bind(5);
  } else {
    insert_.bind(5, fact.attribute);
  }
  insert_.bind(6, fact.text);
  insert_.bind(7, fact.confidence);
  insert_.bind(8, fact.valid_from_us);
  if (fact.valid_to_us) {
    insert_.bind(9, *fact.valid_to_us);
  } else {
    insert_.bind(9);
  }
  insert_.bind(10, fact.whole_days ? 1 : 0);
  insert_.bind(11, fact.source_seq);
  insert_.bind(12, fact.sentence_index);
  if (superseded) {
    insert_.bind(13, *superseded);
  } else {
    insert_.bind(13);
  }
  insert_.bind(14, fact.sensitivity);
  insert_.exec();
  const std::int64_t id = db_.getLastInsertRowid();
  for (int primary = 1; primary >= 0; --primary) {
    auto link = [&](const std::string& key, const std::string& name) {
      link_.reset();
      SQLite::bind(link_, id, key, name, primary);
      link_.exec();
    };
    if (primary == 1) {
      link(fact.entity_key, fact.entity_name);
    } else {
      for (const auto& [key, name] : fact.linked) link(key, name);
    }
  }
  return id;
}

}  // namespace reflectd::store
