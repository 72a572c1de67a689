// A conversation's medallion (jobs/medallion_people.hpp): who the people are, what is known
// of each and what each plans, with the facts it quotes counted in its sensitivity.

#include <catch2/catch.hpp>

#include "common/timestamp.hpp"
#include "daemon/settings.hpp"
#include "jobs/facts.hpp"
#include "jobs/follow_ups.hpp"
#include "jobs/medallion.hpp"
#include "jobs/medallion_people.hpp"
#include "recall/record_reads.hpp"
#include "store/database.hpp"
#include "support/corpus.hpp"
#include "support/daemon_fixture.hpp"

using namespace reflectd;
using nlohmann::json;

namespace {

std::string turn(const std::string& id, const std::string& speaker, const std::string& text,
                 const std::string& ts, const std::string& sensitivity = "low") {
  return json{{"id", id},
              {"kind", "prompt"},
              {"namespace", "talk"},
              {"agent_id", speaker},
              {"content", speaker + ": " + text},
              {"timestamp", ts},
              {"sensitivity", sensitivity}}
      .dump();
}

void run(SQLite::Database& db, const Clock& clock, const std::string& name) {
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}, nullptr};
  if (name == "facts") {
    jobs::run_facts(ctx);
  } else {
    jobs::run_medallion_refresh(ctx, daemon::medallion_params(config::defaults()));
  }
}

json medallion(SQLite::Database& db) {
  return json::parse(
      db.execAndGet("SELECT content_json FROM medallions WHERE id = 'med:talk'").getString());
}

}  // namespace

TEST_CASE("a conversation's medallion names its people, what is known of them and their plans") {
  test::TempDir dir;
  const std::string path = dir.file("p.db");
  FakeClock clock(*parse_rfc3339_us("2023-06-01T00:00:00Z"));
  const std::vector<std::string> turns{
      turn("t1", "Ana", "I moved to Denver last month with my two cats.", "2023-05-08T09:00:00Z"),
      turn("t2", "Ben", "Nice! How is the new flat?", "2023-05-08T09:01:00Z"),
      turn("t3", "Ana", "I started a pottery class at the community center yesterday.",
           "2023-05-08T09:02:00Z"),
      turn("t4", "Ben", "I work as a nurse at the city clinic now.", "2023-05-08T09:03:00Z"),
      turn("t5", "Ana", "I keep a secret diary about my dreams and travels.",
           "2023-05-08T09:04:00Z", "high"),
      turn("t6", "Ben", "I'm running the Boston marathon with my sister next month.",
           "2023-05-20T09:00:00Z"),
      turn("t7", "Ana", "That sounds amazing, good luck!", "2023-05-20T09:01:00Z")};
  REQUIRE(test::load_lines(path, turns, clock) == turns.size());
  auto db = store::open_database({path, "off", 5000}, store::Access::kWriter);

  // Built before the facts exist, the medallion is a namespace's; the facts make it stale.
  run(db, clock, "medallion");
  CHECK_THAT(medallion(db)["summary"]["high_level"].get<std::string>(),
             Catch::StartsWith("Namespace talk: 7 events"));
  run(db, clock, "facts");
  run(db, clock, "medallion");
  const json m = medallion(db);
  CHECK(m["meta"]["x_reflectd"]["refresh_reason"] == "facts in scope changed");
  CHECK_THAT(m["summary"]["high_level"].get<std::string>(),
             Catch::Equals("Conversation of Ana and Ben (talk): 7 events from 2023-05-08 to "
                           "2023-05-20. Latest (2023-05-08): Ben works as a nurse at the city "
                           "clinic now. Next (2023-06-01): Ben is running the Boston marathon "
                           "with Ben's sister in June 2023. Open: nothing."));
  const json& people = m["summary"]["subsystems"];
  REQUIRE(people.size() >= 2);
  CHECK(people[0]["name"] == "Ana");
  CHECK(people[0]["status"] == "stable");
  // The attribute first, then the dated fact; the diary is `high` and is not quoted.
  CHECK(people[0]["notes"] ==
        "2 facts told from 2023-05-08 to 2023-05-08. Known: Ana moved to Denver in April 2023 "
        "with Ana's two cats (2023-04-01); Ana started a pottery class at the community center "
        "on 7 May 2023 (2023-05-07).");
  CHECK(people[0]["x_reflectd"]["entity"] == "person:ana");
  CHECK(people[1]["name"] == "Ben");
  // The marathon is dated after the newest event: a plan.
  CHECK(people[1]["status"] == "in_progress");
  CHECK(people[1]["notes"] ==
        "2 facts told from 2023-05-08 to 2023-05-20. Known: Ben works as a nurse at the city "
        "clinic now (2023-05-08). Plans: Ben is running the Boston marathon with Ben's sister in "
        "June 2023 (2023-06-01).");
  CHECK(m["affordances"]["recommended_entry_points"][0] == "Start from person:ana");
  CHECK(m["affordances"]["recommended_entry_points"][1] == "Start from person:ben");
  // Every quoted fact is an item, so the medallion reads at its level.
  CHECK(db.execAndGet("SELECT count(*) FROM medallion_items WHERE medallion_id = 'med:talk' AND "
                      "item_kind = 'F'")
            .getInt() == 4);

  // A quoted fact raised to `high` raises the medallion's level: one above the reader's, it
  // comes back redacted.
  recall::ReadScope medium;
  medium.clearance = 2;
  const json before = recall::read_medallion(db, {{"action", "get"}, {"id", "med:talk"}}, medium);
  CHECK(before["medallion"]["summary"]["subsystems"][1]["name"] == "Ben");
  db.exec("UPDATE facts SET sensitivity = 'high' WHERE fact_text LIKE 'Ben works%'");
  const json after = recall::read_medallion(db, {{"action", "get"}, {"id", "med:talk"}}, medium);
  CHECK(after["medallion"]["redacted"] == 1);
}

TEST_CASE("a name that starts a person's name is that person") {
  std::vector<jobs::Person> people(1);
  people[0].key = "person:melanie";
  CHECK(jobs::is_person_name("name:melanie", people));
  CHECK(jobs::is_person_name("name:mel", people));
  CHECK_FALSE(jobs::is_person_name("name:me", people));  // under three letters
  CHECK_FALSE(jobs::is_person_name("name:melbourne", people));
  CHECK_FALSE(jobs::is_person_name("person:mel", people));
}

TEST_CASE("a plan whose day came with nothing said of it since is an open thread") {
  test::TempDir dir;
  const std::string path = dir.file("o.db");
  FakeClock clock(*parse_rfc3339_us("2023-07-01T00:00:00Z"));
  const std::vector<std::string> turns{
      turn("t1", "Ana", "I'm putting together a talent show for the kids next month.",
           "2023-05-08T09:00:00Z"),
      turn("t2", "Ben", "I'm running the Boston marathon with my sister next month.",
           "2023-05-08T09:01:00Z"),
      // Written before its day, a mention takes nothing up; "show" and "talent" apart are no
      // pair.
      turn("t3", "Ana", "The talent show for the kids is coming together nicely.",
           "2023-05-20T09:00:00Z"),
      turn("t4", "Ana", "How was the Boston marathon? Did your sister run it too?",
           "2023-06-05T09:00:00Z"),
      turn("t5", "Ben", "Talent like hers should show more often, my sister finished first!",
           "2023-06-05T09:01:00Z")};
  REQUIRE(test::load_lines(path, turns, clock) == turns.size());
  auto db = store::open_database({path, "off", 5000}, store::Access::kWriter);
  run(db, clock, "facts");
  run(db, clock, "medallion");
  const json m = medallion(db);
  REQUIRE(m["open_questions"].size() == 1);
  CHECK(m["open_questions"][0]["question"] ==
        "Follow up with Ana: \"Ana is putting together a talent show for the kids in June "
        "2023.\" (told 2023-05-08, for 2023-06-01; nothing said of it since)");
  CHECK(m["open_questions"][0]["priority"] == "medium");  // due within 30 days of the newest
  CHECK_THAT(m["summary"]["high_level"].get<std::string>(),
             Catch::Contains(" Open: Follow up with Ana: "));
}

TEST_CASE("a later text speaks of a topic when it writes one of its pairs") {
  text::Tokenizer tokenizer;
  jobs::Topics topics(tokenizer, {"Ana Lopez"});
  const jobs::Topic plan = topics.of("Ana is putting together a talent show on 3 June 2023.");
  CHECK(plan.stems == std::set<std::string>{"put", "togeth", "talent", "show"});
  CHECK(plan.pairs == std::set<std::string>{"put togeth", "talent show"});
  CHECK(jobs::speaks_of(topics.of("The talent show was a hit"), plan));
  CHECK_FALSE(jobs::speaks_of(topics.of("Talent, show it!"), plan));
  CHECK_FALSE(jobs::speaks_of(topics.of("Show your talent"), plan));
  // Without a pair, two shared words (or the only one) do.
  const jobs::Topic single = topics.of("Lopez: marathon in June.");
  CHECK(single.pairs.empty());
  CHECK(jobs::speaks_of(topics.of("the marathon"), single));
  const jobs::Topic two = topics.of("Boston, marathon");
  CHECK_FALSE(jobs::speaks_of(topics.of("the marathon"), two));
  CHECK(jobs::speaks_of(topics.of("marathon of Boston"), two));
  CHECK(jobs::dated_sentence("So excited! Ana is flying to Rome in June 2023. Can't wait!") ==
        " Ana is flying to Rome in June 2023.");
  CHECK(jobs::dated_sentence("No date here. None.") == "No date here. None.");
}
