// Edge decay as a read-time closed form and the sweeps' counts, speakers and declared aliases
// in the cluster run, and the migrations that carry the sweep and the clears forward.

#include <catch2/catch.hpp>

#include "support/entities_fixture.hpp"

using namespace reflectd;
using nlohmann::json;
using test::dump;
using test::open_writer;
using namespace reflectd::test::entities_fixture;

TEST_CASE("edge decay is a read-time closed form; sweeps report reinforced edges") {
  test::TempDir dir;
  Runner run;
  const std::string a = dir.file("a.db");
  const std::string b = dir.file("b.db");
  REQUIRE(test::load_corpus(a, {"swe-agent-trajectories.jsonl"}, run.clock) == 448);
  {
    auto db = open_writer(a);
    run.cluster(db, default_params());
  }
  std::filesystem::copy_file(a, b);
  const std::int64_t half_life = default_params().entities.edge_half_life_s;
  std::int64_t edges = 0;
  {
    auto db = open_writer(a);
    edges = db.execAndGet("SELECT count(*) FROM entity_relationships").getInt64();
  }
  const json first = sweep(a, kNow + 10 * kDay);
  CHECK(first["edges_reinforced"] == edges);
  for (std::int64_t t = kNow + kDay; t <= kNow + 10 * kDay; t += kDay) sweep(b, t);
  CHECK(sweep(a, kNow + 10 * kDay)["edges_reinforced"] == 0);
  auto db_a = open_writer(a);
  auto db_b = open_writer(b);
  const std::string q =
      "SELECT relationship_id, strength, strength_base, strength_ref_us FROM entity_relationships "
      "ORDER BY relationship_id";
  CHECK(dump(db_a, q) == dump(db_b, q));
  // Sweeps do not rewrite edges: the stored strength stays the strength at the reference time
  // (the base), and readers evaluate the decay in closed form.
  CHECK(db_a.execAndGet("SELECT count(*) FROM entity_relationships WHERE strength != strength_base")
            .getInt64() == 0);
  SQLite::Statement row(db_a,
                        "SELECT strength_base, strength_ref_us FROM entity_relationships "
                        "ORDER BY relationship_id LIMIT 1");
  REQUIRE(row.executeStep());
  const double base = row.getColumn(0).getDouble();
  const std::int64_t ref = row.getColumn(1).getInt64();
  CHECK(jobs::edge_strength_at(base, ref, ref + 2 * half_life * kSecond, half_life) ==
        Approx(base / 4));
}

TEST_CASE("a sweep counts exactly the edges the cluster job wrote since the previous sweep") {
  test::TempDir dir;
  Runner run;
  const std::string path = dir.file("a.db");
  const std::vector<std::string> lines = test::corpus_lines("swe-agent-trajectories.jsonl");
  const auto half = lines.begin() + static_cast<std::ptrdiff_t>(lines.size() / 2);
  REQUIRE(test::load_lines(path, {lines.begin(), half}, run.clock) == lines.size() / 2);
  {
    auto db = open_writer(path);
    run.cluster(db, default_params());
  }
  const std::string edges_sql =
      "SELECT relationship_id, mention_count, last_evidence_seq FROM entity_relationships "
      "ORDER BY relationship_id";
  std::string before;
  {
    auto db = open_writer(path);
    before = dump(db, edges_sql);
    REQUIRE(db.execAndGet("SELECT count(*) FROM entity_relationships").getInt64() > 100);
  }
  CHECK(sweep(path, kNow)["edges_reinforced"] == std::count(before.begin(), before.end(), '\n'));
  CHECK(sweep(path, kNow + kDay)["edges_reinforced"] == 0);

  // The second half of the same trajectories reinforces some of the edges and adds others:
  // the count is the rows the cluster job inserted or changed, whatever their seq.
  REQUIRE(test::load_lines(path, {half, lines.end()}, run.clock) ==
          lines.size() - lines.size() / 2);
  std::int64_t written = 0;
  std::int64_t unchanged = 0;
  {
    auto db = open_writer(path);
    run.cluster(db, default_params());
    std::istringstream old_rows(before);
    std::set<std::string> kept;
    for (std::string row; std::getline(old_rows, row);) kept.insert(row);
    std::istringstream new_rows(dump(db, edges_sql));
    for (std::string row; std::getline(new_rows, row);) ++(kept.count(row) ? unchanged : written);
  }
  REQUIRE(written > 0);
  REQUIRE(unchanged > 0);
  CHECK(sweep(path, kNow + 2 * kDay)["edges_reinforced"] == written);
  CHECK(sweep(path, kNow + 3 * kDay)["edges_reinforced"] == 0);
}

TEST_CASE("migration 17: the sweep's count resumes from the flags a version 16 database kept") {
  test::TempDir dir;
  const std::string path = dir.file("old.db");
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    REQUIRE(store::migrate(db, 16) == 16);
    // Foreign keys are off on this connection: the edges need no events or entities here.
    // Namespace a was swept through seq 40 and reinforced since at 41 and 57; b never swept.
    db.exec(
        "INSERT INTO entity_relationships (namespace, source_id, target_id, rel_type, strength, "
        "strength_base, strength_ref_us, mention_count, evidence_seq, last_evidence_seq, "
        "valid_from_us, unswept) VALUES "
        "('a', 1, 2, 'co_mentioned', 0.1, 0.1, 0, 1, 10, 10, 0, 0), "
        "('a', 1, 3, 'co_mentioned', 0.1, 0.1, 0, 1, 12, 40, 0, 0), "
        "('a', 2, 3, 'co_mentioned', 0.1, 0.1, 0, 1, 12, 41, 0, 1), "
        "('a', 3, 4, 'co_mentioned', 0.1, 0.1, 0, 1, 57, 57, 0, 1), "
        "('b', 5, 6, 'co_mentioned', 0.1, 0.1, 0, 1, 3, 3, 0, 1)");
  }
  CHECK(sweep(path, kNow)["edges_reinforced"] == 3);
  {
    auto db = open_writer(path);
    CHECK(dump(db, "SELECT * FROM decay_edge_watermarks ORDER BY namespace") == "a|57|\nb|3|\n");
    CHECK(db.execAndGet("SELECT count(*) FROM pragma_table_info('entity_relationships') WHERE "
                        "name = 'unswept'")
              .getInt() == 0);
    CHECK(db.execAndGet("SELECT count(*) FROM sqlite_master WHERE name = "
                        "'entity_relationships_unswept'")
              .getInt() == 0);
    CHECK(db.execAndGet("PRAGMA integrity_check").getString() == "ok");
    // A database set back to 16 migrates again without a change.
    db.exec("PRAGMA user_version = 16");
    REQUIRE(store::migrate(db) == store::latest_schema_version());
    CHECK(dump(db, "SELECT * FROM decay_edge_watermarks ORDER BY namespace") == "a|57|\nb|3|\n");
  }
  CHECK(sweep(path, kNow + kDay)["edges_reinforced"] == 0);
}

// A conversation's party is one entity: the publishing agent, the speaker prefix, the bare
// name others call them by and a nickname that begins their name.
TEST_CASE("a conversation's speakers are one entity each, nicknames included") {
  test::TempDir dir;
  Runner run;
  const std::string path = dir.file("parties.db");
  const std::vector<std::string> lines = {
      R"({"kind":"conversation","namespace":"chat","agent_id":"Melanie","content":"Melanie: I saw Caro at the lake.","timestamp":"2026-11-01T10:00:00Z"})",
      R"({"kind":"conversation","namespace":"chat","agent_id":"Caroline","content":"Caroline: Hey Mel, I went to a support group on Friday.","timestamp":"2026-11-01T10:01:00Z"})",
      R"({"kind":"conversation","namespace":"chat","agent_id":"Melanie","content":"Melanie: Well done Caroline. Tell me more, Caro.","timestamp":"2026-11-01T10:02:00Z"})",
      // "Ca" is too short to be a nickname, "Carla" does not begin "Caroline".
      R"({"kind":"conversation","namespace":"chat","agent_id":"Caroline","content":"Caroline: I told Ca and Carla.","timestamp":"2026-11-01T10:03:00Z"})",
  };
  REQUIRE(test::load_lines(path, lines, run.clock) == 4);
  {
    auto db = open_writer(path);
    // "Caro" was named before Caroline spoke: its entity merges at the end of the same run.
    CHECK(run.cluster(db, default_params())["merges_executed"] == 1);
    CHECK(dump(db, "SELECT alias, canonical_key, origin FROM entity_aliases ORDER BY 1") ==
          "agent:caroline|person:caroline|declared|\nagent:melanie|person:melanie|declared|\n"
          "name:caro|person:caroline|nickname|\nname:caroline|person:caroline|declared|\n"
          "name:mel|person:melanie|nickname|\nname:melanie|person:melanie|declared|\n");
    CHECK(dump(db, "SELECT canonical_key, mention_count FROM entities ORDER BY 1") ==
          "name:ca|1|\nname:carla|1|\nperson:caroline|4|\nperson:melanie|3|\n");
  }
  CHECK(sweep(path, kNow)["merges_executed"] == 0);
}

// An alias declared after the alias had mentions of its own merges them into the canonical
// entity at the end of the cluster run that learnt it, before communities are detected (seed
// 003 MemifyResult.merges_executed; jobs/entity_merge.hpp).
TEST_CASE("a declared alias merges the alias's earlier mentions and edges in the cluster run") {
  test::TempDir dir;
  Runner run;
  const std::string path = dir.file("merge.db");
  const std::vector<std::string> lines = {
      R"({"kind":"observation","namespace":"team","content":"Mel fixed the build",
          "entities":["person:Mel","repo:zmq"],"timestamp":"2026-11-01T10:00:00Z"})",
      R"({"kind":"observation","namespace":"team","content":"Melanie reviewed the fix",
          "entities":["person:Melanie","repo:zmq"],"timestamp":"2026-11-01T11:00:00Z"})",
      R"({"kind":"observation","namespace":"team","content":"mel is short for melanie",
          "entities":["person:Mel"],"relations":[{"predicate":"alias_of","target":"person:Melanie"}],
          "timestamp":"2026-11-01T12:00:00Z"})",
  };
  std::vector<std::string> one_line;
  for (std::string line : lines) {
    std::erase(line, '\n');
    one_line.push_back(line);
  }
  REQUIRE(test::load_lines(path, one_line, run.clock) == 3);
  {
    auto db = open_writer(path);
    // The third event's mention resolved through the alias as it was learnt; the first
    // event's person:mel merged after the last chunk.
    CHECK(run.cluster(db, default_params())["merges_executed"] == 1);
    CHECK(dump(db, "SELECT alias, canonical_key, origin FROM entity_aliases ORDER BY 1") ==
          "name:mel|person:melanie|declared|\nname:melanie|person:melanie|declared|\n"
          "person:mel|person:melanie|declared|\n");
  }
  CHECK(sweep(path, kNow)["merges_executed"] == 0);
  auto db = open_writer(path);
  CHECK(dump(db, "SELECT canonical_key, mention_count FROM entities ORDER BY 1") ==
        "person:melanie|3|\nrepo:zmq|2|\n");
  CHECK(dump(db,
             "SELECT ee.seq, e.canonical_key, ee.is_primary FROM event_entities ee JOIN entities "
             "e USING (entity_id) ORDER BY 1, 2") ==
        "1|person:melanie|1|\n1|repo:zmq|1|\n2|person:melanie|1|\n2|repo:zmq|1|\n"
        "3|person:melanie|1|\n");
  // The two co_occurs edges became one, from the smaller key to the larger, with both
  // mentions and the first evidence.
  CHECK(dump(db,
             "SELECT s.canonical_key, t.canonical_key, r.rel_type, r.mention_count, "
             "r.evidence_seq, r.last_evidence_seq FROM entity_relationships r JOIN entities s ON "
             "s.entity_id = r.source_id JOIN entities t ON t.entity_id = r.target_id") ==
        "person:melanie|repo:zmq|co_occurs|2|1|2|\n");
  CHECK(dump(db,
             "SELECT record_type, record_id, action, actor, json_extract(previous, "
             "'$.into'), json_extract(previous, '$.moved.mentions_moved'), "
             "json_extract(previous, '$.moved.edges_joined') FROM audit_log WHERE action = "
             "'merge'") == "entity|person:mel|merge|job:cluster|person:melanie|1|1|\n");
  SQLite::Statement dangling(db, "PRAGMA foreign_key_check");
  CHECK(!dangling.executeStep());
  CHECK(db.execAndGet("PRAGMA integrity_check").getString() == "ok");
  CHECK(sweep(path, kNow + kDay)["merges_executed"] == 0);
}

// Entity, relationship and cluster ids are assigned in event order since migration 42; an older
// database's ids were assigned in run order, so the migration marks each namespace with derived
// state for a clear that the daemon runs, and the jobs rebuild, at its first start.
TEST_CASE("migration 42 marks every namespace with derived state for a clear") {
  test::TempDir dir;
  Runner run;
  const std::string path = dir.file("upgrade.db");
  const std::vector<std::string> lines = {
      R"({"kind":"observation","namespace":"team","content":"Mel fixed the build","entities":["person:Mel","repo:zmq"],"timestamp":"2026-11-01T10:00:00Z"})",
      R"({"kind":"observation","namespace":"ops","content":"Disk full on the runner","entities":["host:runner"],"timestamp":"2026-11-01T11:00:00Z"})",
      R"({"kind":"observation","namespace":"idle","content":"Nothing derived here yet","timestamp":"2026-11-01T12:00:00Z"})",
  };
  REQUIRE(test::load_lines(path, lines, run.clock) == 3);
  auto db = open_writer(path);
  run.cluster(db, default_params(), "team");
  run.cluster(db, default_params(), "ops");
  CHECK(db.execAndGet("SELECT count(*) FROM derived_clears").getInt() == 0);
  db.exec("PRAGMA user_version = 41");
  REQUIRE(store::migrate(db) == store::latest_schema_version());
  CHECK(dump(db, "SELECT namespace, requested_us FROM derived_clears ORDER BY 1") ==
        "ops|0|\nteam|0|\n");
}
