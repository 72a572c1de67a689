// The fact ledger: the extraction rules on single sentences against a fixed
// timestamp, and the `facts` job with its read on a real SQLite file (supersession, reruns,
// dates, clearance).

#include <catch2/catch.hpp>

#include <atomic>
#include <limits>

#include "common/clock.hpp"
#include "common/timestamp.hpp"
#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "jobs/clustering.hpp"
#include "jobs/entity_summaries.hpp"
#include "jobs/facts.hpp"
#include "jobs/sql_functions.hpp"
#include "recall/recall.hpp"
#include "recall/record_reads.hpp"
#include "store/database.hpp"
#include "store/fts_index.hpp"
#include "support/corpus.hpp"
#include "support/temp_dir.hpp"
#include "text/chat_spelling.hpp"
#include "text/fact_extraction.hpp"

namespace {

using namespace reflectd;
using nlohmann::json;

// Monday 8 May 2023, 13:57 UTC (LoCoMo's first session).
const std::int64_t kMonday = *parse_rfc3339_us("2023-05-08T13:57:00Z");

std::vector<text::ExtractedFact> facts_of(std::string_view content,
                                          std::string_view kind = "prompt",
                                          std::string_view agent = "",
                                          std::string_view listener = "") {
  text::FactSource source;
  source.kind = kind;
  source.content = content;
  source.agent_id = agent;
  source.listener_name = listener;
  source.ts_us = kMonday;
  return text::extract_facts(source);
}

}  // namespace

TEST_CASE("facts: first person becomes the speaker, relative times become dates") {
  CHECK(text::third_person("I went to a LGBTQ support group yesterday and it was so powerful.",
                           "Caroline", kMonday) ==
        "Caroline went to a LGBTQ support group on 7 May 2023 and it was so powerful.");
  CHECK(text::third_person("I'm swamped with the kids & work.", "Melanie", kMonday) ==
        "Melanie is swamped with the kids & work.");
  CHECK(text::third_person("I love painting with my kids", "Melanie", kMonday) ==
        "Melanie loves painting with Melanie's kids");
  CHECK(text::third_person("I really try to go and I watch it", "Jon", kMonday) ==
        "Jon really tries to go and Jon watches it");
  CHECK(text::third_person("We went camping last week.", "Mel", kMonday) ==
        "Mel and others went camping in the week before 8 May 2023.");
  // A time that is the subject takes no preposition.
  CHECK(text::third_person("Last week was wild, I got noticed by editors", "Gina", kMonday) ==
        "The week before 8 May 2023 was wild, Gina got noticed by editors");
  CHECK(text::third_person("Yesterday was great but I was tired", "Gina", kMonday) ==
        "7 May 2023 was great but Gina was tired");
  CHECK(text::third_person("I know last week was hard", "Gina", kMonday) ==
        "Gina knows the week before 8 May 2023 was hard");
  CHECK(text::third_person("I’ve been painting since last year", "Mel", kMonday) ==
        "Mel has been painting since 2022");
  CHECK(text::third_person("I have two kids and I am happy", "Mel", kMonday) ==
        "Mel has two kids and Mel is happy");
}

TEST_CASE("facts: which sentences of a turn are facts") {
  // Greetings, questions and reactions are no facts.
  CHECK(facts_of("Caroline: Hey Mel! Good to see you! How have you been?").empty());
  CHECK(facts_of("Melanie: Wow, that's cool, Caroline! What happened?").empty());
  // Reactions to the other person ("Kudos for …", "Bummer about …", "Way to go") are left
  // out of the report beside them.
  auto reacted = facts_of(
      "Maria: Kudos for helping kids learn. Bummer about the setback. I just adopted a pup "
      "from a shelter downtown, her name is Coco.");
  REQUIRE(reacted.size() == 1);
  CHECK(reacted[0].statement ==
        "Maria just adopted a pup from a shelter downtown, her name is Coco.");
  // A closing bracket after the mark ends the sentence with it: the reaction stays apart.
  auto bracketed =
      facts_of("Gina: Hah, yeah!) Last Friday I went to a dance class with a group of friends.");
  REQUIRE(bracketed.size() == 1);
  CHECK(bracketed[0].statement ==
        "On 5 May 2023 Gina went to a dance class with a group of friends.");
  CHECK(facts_of("Melanie: I'm good. I agree!").empty());

  const auto support = facts_of(
      "Caroline: I went to a LGBTQ support group yesterday and it was "
      "so powerful. What about you?");
  REQUIRE(support.size() == 1);
  CHECK(support[0].entity_key == "person:caroline");
  CHECK(support[0].entity_name == "Caroline");
  CHECK(support[0].entity_type == "person");
  CHECK(support[0].sentence_index == 0);
  CHECK(support[0].statement ==
        "Caroline went to a LGBTQ support group on 7 May 2023 and it was so powerful.");
  CHECK(support[0].valid_from_us == *parse_rfc3339_us("2023-05-07T00:00:00Z"));
  CHECK(support[0].valid_to_us == *parse_rfc3339_us("2023-05-08T00:00:00Z"));
  CHECK(support[0].whole_days);
  CHECK(support[0].linked.empty());  // "LGBTQ" has no lower-case letter: no capitalised name

  // Without a time expression the fact holds from when it was said.
  const auto kids = facts_of("Melanie: Thanks! My kids love the beach and the dunes.");
  REQUIRE(kids.size() == 1);
  CHECK(kids[0].statement == "Melanie's kids love the beach and the dunes.");
  CHECK(kids[0].sentence_index == 0);
  CHECK(kids[0].valid_from_us == kMonday);
  CHECK_FALSE(kids[0].valid_to_us);
  CHECK_FALSE(kids[0].whole_days);

  // Subject-less openings and shared photos.
  const auto shoes = facts_of(
      "Melanie: Just got some new running shoes for the marathon! [shares a photo: a pair of "
      "blue sneakers]");
  REQUIRE(shoes.size() == 1);
  CHECK(shoes[0].statement ==
        "Melanie just got some new running shoes for the marathon! Melanie shared a photo: a "
        "pair of blue sneakers.");
  CHECK(facts_of("Nate: Just been helping friends at the tournament downtown.")[0].statement ==
        "Nate has just been helping friends at the tournament downtown.");
  CHECK(facts_of("Nate: Went camping with the kids near the lake.")[0].statement ==
        "Nate went camping with the kids near the lake.");
  CHECK(facts_of("Caroline: Gonna continue my edu and check out career options.")[0].statement ==
        "Caroline is going to continue Caroline's education and check out career options.");
  CHECK(facts_of("Nate: Just make sure you don't quit - the path will show up.").empty());

  // The speaker is the agent when the turn has no "Name:" prefix.
  const auto agent =
      facts_of("I adopted a puppy from the shelter last Saturday.", "conversation", "Ana");
  REQUIRE(agent.size() == 1);
  CHECK(agent[0].statement == "Ana adopted a puppy from the shelter on 6 May 2023.");
  CHECK(agent[0].valid_from_us == *parse_rfc3339_us("2023-05-06T00:00:00Z"));

  // Commits and tool output are no conversation: their reflections are decisions.
  CHECK(facts_of("Problem: I saw a leak in the socket code\n\nSolution: free it", "commit_change",
                 "dev")
            .empty());
  CHECK(facts_of("I ran the tests and they passed", "result", "agent").empty());
}

TEST_CASE("facts: a turn gives at most one fact, what it reports of its speaker") {
  // The report's sentences in order, with a sentence that says more of the same thing; the
  // question, the greeting and the reaction are left out.
  const auto camping = facts_of(
      "John: Hey Maria, that sounds great - we went camping in the mountains last week. The "
      "trail ran along a glacier lake. How was your trip?");
  REQUIRE(camping.size() == 1);
  CHECK(camping[0].statement ==
        "John and others went camping in the mountains in the week before 8 May 2023. The trail "
        "ran along a glacier lake.");
  CHECK(camping[0].valid_from_us == *parse_rfc3339_us("2023-05-01T00:00:00Z"));

  // About the listener, a mood, or too little to remember: no fact.
  CHECK(facts_of("Caroline: I'm really proud of you for taking part in the charity race!").empty());
  CHECK(facts_of("Tim: I hope you two have a great time at the castles.").empty());
  CHECK(facts_of("Nate: It's been tough, but I'm staying positive and feeling good.").empty());
  CHECK(facts_of("Jon: Can't wait to see where this journey leads me!").empty());
  CHECK(facts_of("Joanna: I'm so glad the kids loved it.").empty());

  // A report told to the listener is still a report; a leading vocative is dropped.
  const auto book = facts_of(
      "Tim: Hey John! Wanted to let you know I read this awesome book about castles in the UK.");
  REQUIRE(book.size() == 1);
  CHECK(book[0].statement ==
        "Wanted to let you know Tim read this awesome book about castles in the UK.");
  const auto roadtrip = facts_of(
      "Melanie: Hey Caroline, I took the kids on a roadtrip to the "
      "national park near the coast.");
  REQUIRE(roadtrip.size() == 1);
  CHECK(roadtrip[0].statement ==
        "Melanie took the kids on a roadtrip to the national park near the coast.");
}

TEST_CASE("facts: chat spellings, proposals, general truths and clause breaks") {
  // Chat spellings are written out, so the verb after them conjugates.
  CHECK(text::third_person("I wanna start a studio for my fam", "Jon", kMonday) ==
        "Jon wants to start a studio for Jon's family");
  CHECK(text::third_person("Startin' my biz, 'cause I'm livin' my dreams", "Jon", kMonday) ==
        "Starting Jon's business, because Jon is living Jon's dreams");
  CHECK(text::third_person("I want 'em to see my fave pic", "Gina", kMonday) ==
        "Gina wants them to see Gina's favorite picture");
  CHECK(text::standard_spelling("Gonna be livin\xE2\x80\x99 it up, \xE2\x80\x99"
                                "cause Fam rocks") ==
        "Going to be living it up, because Family rocks");
  CHECK(text::standard_spelling("gotta go, the famous bizarre pics") ==
        "gotta go, the famous bizarre pictures");
  // A past form opening the sentence has the speaker as its subject, though a later clause
  // writes one.
  const auto lost =
      facts_of("Jon: Lost my job as a banker yesterday, so I'm starting my own dance studio.");
  REQUIRE(lost.size() == 1);
  CHECK(lost[0].statement ==
        "Jon lost Jon's job as a banker on 7 May 2023, so Jon is starting Jon's own dance "
        "studio.");
  // "Let's ..." proposes; "Thanks for ..." reacts; neither is told in the fact.
  CHECK(facts_of("John: Yep, let's keep making great memories with our loved ones and "
                 "cherishing the time we have.")
            .empty());
  const auto thanked =
      facts_of("Jon: Thanks for asking, Gina! I rented a studio by the river on Main Street.");
  REQUIRE(thanked.size() == 1);
  CHECK(thanked[0].statement == "Jon rented a studio by the river on Main Street.");
  // "us" as the only first person says what holds for people in general.
  CHECK(facts_of("Tim: Taking a break from life can help us recharge and get some peace and "
                 "reconnect with nature.")
            .empty());
  CHECK(
      facts_of("John: Our one-year-old is so cute, his name is Kyle and he loves trucks.").size() ==
      1);
  // A dash against the word before it, or an em dash, separates clauses like a spaced dash:
  // the question to the listener stays out of the report.
  const auto dashed = facts_of(
      "Maria: Just wanted to give you the heads up on what's been happening lately- I took a "
      "creative writing class recently, and it was super enlightening!");
  REQUIRE(dashed.size() == 1);
  CHECK(dashed[0].statement ==
        "Maria took a creative writing class recently, and it was super enlightening!");
  const auto em = facts_of(
      "Nate: Did you see the game \xE2\x80\x94 I won my second video game tournament downtown.");
  REQUIRE(em.size() == 1);
  CHECK(em[0].statement == "Nate won Nate's second video game tournament downtown.");
}

TEST_CASE("facts: the listener named, dated short reports and past-form openers") {
  // "your" and an object "you" name the listener when the speaker is the subject.
  const auto advice =
      facts_of("Joanna: I took your recommendation and watched the whole trilogy with my sister.",
               "prompt", "", "Nate");
  REQUIRE(advice.size() == 1);
  CHECK(advice[0].statement ==
        "Joanna took Nate's recommendation and watched the whole trilogy with Joanna's sister.");
  const auto shared = facts_of(
      "Tim: I also wanted to share my grandmother's oak bookshelf with you.", "prompt", "", "John");
  REQUIRE(shared.size() == 1);
  CHECK(shared[0].statement ==
        "Tim also wanted to share Tim's grandmother's oak bookshelf with "
        "John.");
  // Without a known listener, or when "you" is the subject or the verb one of opinion, the
  // sentence is addressed to the listener and gives nothing.
  CHECK(facts_of("Joanna: I took your recommendation and watched the whole trilogy with my "
                 "sister.")
            .empty());
  CHECK(facts_of("Gina: I think your studio will be a hit with the local dancers.", "prompt", "",
                 "Jon")
            .empty());
  CHECK(facts_of("Gina: I know you're going to open the best dance studio in town.", "prompt", "",
                 "Jon")
            .empty());
  CHECK(facts_of("Maria: You should join the shelter's volunteer program next month.", "prompt", "",
                 "John")
            .empty());
  // A dated happening is kept however briefly said; an undated one of two content words is
  // a remark.
  const auto dyed = facts_of("Nate: Hey Jo, guess what I did? Dyed my hair last week - come see!");
  REQUIRE(dyed.size() == 1);
  CHECK(dyed[0].statement == "Nate dyed Nate's hair in the week before 8 May 2023.");
  CHECK(dyed[0].valid_from_us == *parse_rfc3339_us("2023-05-01T00:00:00Z"));
  CHECK(facts_of("Nate: Dyed my hair - come see!").empty());
  // A regular past form before its object opens a report; "Excited to" gets no subject.
  const auto painted = facts_of("Melanie: Painted a lake scene with my kids at the summer camp.");
  REQUIRE(painted.size() == 1);
  CHECK(painted[0].statement ==
        "Melanie painted a lake scene with Melanie's kids at the summer "
        "camp.");
  const auto excited =
      facts_of("Melanie: Excited to see my kids paint a lake scene at the summer camp.");
  REQUIRE(excited.size() == 1);
  CHECK(excited[0].statement ==
        "Excited to see Melanie's kids paint a lake scene at the summer camp.");
}

TEST_CASE("facts: attributes of single-valued properties") {
  auto attribute = [](std::string_view turn) {
    const auto f = facts_of(turn);
    REQUIRE(f.size() == 1);
    return f[0].attribute;
  };
  CHECK(attribute("Ana: I work as a nurse at the clinic.") == "occupation");
  CHECK(attribute("Ana: I work at the city hospital now.") == "employer");
  CHECK(attribute("Ana: I moved to Denver last month.") == "residence");
  CHECK(attribute("Ana: I live in Boston with my partner.") == "residence");
  CHECK(attribute("Ana: I'm originally from Sweden, near Lund.") == "origin");
  CHECK(attribute("Ana: I just turned 30 and threw a party.") == "age");
  CHECK(attribute("Ana: I got married to Sam in June.") == "relationship_status");
  CHECK(attribute("Ana: My favorite book is Dune by Herbert.") == "favorite_book");
  CHECK(attribute("Ana: I painted a lake sunrise at the cabin.") == "");
}

namespace {

json turn(const std::string& id, const std::string& speaker, const std::string& text,
          const std::string& ts, const std::string& sensitivity = "low") {
  return {{"kind", "prompt"},
          {"id", id},
          {"namespace", "talk"},
          {"agent_id", speaker},
          {"content", speaker + ": " + text},
          {"timestamp", ts},
          {"sensitivity", sensitivity}};
}

void store_events(const std::string& path, const std::vector<json>& events, const Clock& clock) {
  std::vector<std::string> lines;
  lines.reserve(events.size());
  for (const json& e : events) lines.push_back(e.dump());
  REQUIRE(test::load_lines(path, lines, clock) == lines.size());
}

json run_job(const std::string& path, const Clock& clock) {
  auto db = store::open_database({path, "off", 5000}, store::Access::kWriter);
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}, nullptr};
  return jobs::run_facts(ctx);
}

}  // namespace

TEST_CASE("facts job: supersession by entity and attribute, reruns, dates and clearance") {
  test::TempDir dir;
  const std::string path = dir.file("f.db");
  FakeClock clock(kMonday + 60 * kDayUs);
  store_events(path,
               {turn("a1", "Ana", "I live in Boston with two cats.", "2023-01-10T09:00:00.000000Z"),
                turn("a2", "Ana", "I moved to Denver last month.", "2023-05-08T09:00:00Z"),
                turn("a3", "Ana", "Hi! How are you?", "2023-05-08T09:01:00Z"),
                turn("a4", "Ana", "I keep a secret diary about my dreams and travels.",
                     "2023-05-08T09:02:00Z", "high")},
               clock);
  const json first = run_job(path, clock);
  CHECK(first["events_read"] == 4);
  CHECK(first["facts_added"] == 3);
  CHECK(first["facts_superseded"] == 1);
  CHECK(first["watermark_seq"] == 4);
  // A rerun adds nothing; new events continue from the watermark.
  CHECK(run_job(path, clock)["facts_added"] == 0);

  auto db = store::open_database({path, "normal", 5000}, store::Access::kReader);
  const recall::ReadScope hyper;
  const json all = recall::read_facts(db, {{"entity", "Ana"}}, hyper);
  REQUIRE(all["ok"] == true);
  REQUIRE(all["facts"].size() == 3);
  const json& boston = all["facts"][0];
  const json& denver = all["facts"][1];
  CHECK(boston["statement"] == "Ana lives in Boston with two cats.");
  CHECK(boston["attribute"] == "residence");
  CHECK(boston["valid_from"] == "2023-01-10T09:00:00.000000Z");
  // Superseded by the move: valid until the first day of "last month" (April 2023).
  CHECK(boston["valid_to"] == "2023-04-01T00:00:00.000000Z");
  CHECK(boston["is_stale"] == true);
  CHECK(boston["evidence_ids"] == json::array({"a1"}));
  CHECK(denver["statement"] == "Ana moved to Denver in April 2023.");
  CHECK(denver["valid_from"] == "2023-04-01");
  CHECK(denver["valid_to"] == "2023-04-30");
  CHECK(denver["supersedes_fact_id"] == boston["id"]);
  CHECK(denver["is_stale"] == false);
  CHECK(denver["linked_entities"] == json::array({{{"key", "name:denver"}, {"name", "Denver"}}}));

  const json current = recall::read_facts(db, {{"entity", "person:Ana"}, {"current", true}}, hyper);
  CHECK(current["facts"].size() == 2);
  const json paged = recall::read_facts(db, {{"after_id", denver["id"]}}, hyper);
  REQUIRE(paged["facts"].size() == 1);
  CHECK(paged["facts"][0]["sensitivity"] == "high");

  // Clearance: "high" is never read at low, redacted at medium.
  recall::ReadScope low;
  low.clearance = 1;
  CHECK(recall::read_facts(db, json::object(), low)["facts"].size() == 2);
  recall::ReadScope medium;
  medium.clearance = 2;
  const json redacted = recall::read_facts(db, json::object(), medium)["facts"];
  REQUIRE(redacted.size() == 3);
  CHECK(redacted[2]["redacted"] == true);
  CHECK(redacted[2]["statement"] == recall::kRedacted);
  CHECK(redacted[2]["linked_entities"].is_null());
  // Namespaces outside the caller's scope are never read.
  recall::ReadScope elsewhere;
  elsewhere.all_namespaces = false;
  elsewhere.namespaces = {"other"};
  CHECK(recall::read_facts(db, json::object(), elsewhere)["facts"].empty());
  CHECK(recall::read_facts(db, {{"after_id", "x"}}, hyper)["ok"] == false);
}

TEST_CASE("facts job: \"you\" is the speaker of the turn before, whichever chunk it fell in") {
  test::TempDir dir;
  const std::string path = dir.file("f.db");
  FakeClock clock(kMonday + 60 * kDayUs);
  const std::string tip = "I took your advice and visited the old lighthouse with my sister.";
  store_events(path,
               {turn("n1", "Nate", "You should see the old lighthouse on the coast.",
                     "2023-05-08T09:00:00Z"),
                turn("j1", "Joanna", "Sounds lovely!", "2023-05-08T09:01:00Z"),
                turn("j2", "Joanna", tip, "2023-05-09T09:00:00Z")},
               clock);
  run_job(path, clock);
  // A later turn, read by a later run: its listener is still found in the store.
  store_events(path, {turn("n2", "Nate", tip, "2023-05-10T09:00:00Z")}, clock);
  run_job(path, clock);
  auto db = store::open_database({path, "normal", 5000}, store::Access::kReader);
  const recall::ReadScope hyper;
  const json facts = recall::read_facts(db, json::object(), hyper)["facts"];
  REQUIRE(facts.size() == 2);
  CHECK(facts[0]["statement"] ==
        "Joanna took Nate's advice and visited the old lighthouse with Joanna's sister.");
  CHECK(facts[1]["statement"] ==
        "Nate took Joanna's advice and visited the old lighthouse with Nate's sister.");
}

TEST_CASE("entity summaries list what is known of a person, whichever job ran first") {
  const std::vector<json> turns{
      turn("a1", "Ana", "I live in Boston with two cats.", "2023-01-10T09:00:00Z"),
      turn("a2", "Ana", "I moved to Denver last month.", "2023-05-08T09:00:00Z"),
      turn("a3", "Ana", "I went to a pottery class yesterday.", "2023-05-20T09:00:00Z"),
      turn("a4", "Ana", "I really enjoy long walks with my dog.", "2023-05-21T09:00:00Z")};
  // Runs the named jobs in order, then the entity summaries; returns Ana's summary.
  auto summary_after = [&](const std::string& path, const std::vector<std::string>& order) {
    FakeClock clock(kMonday + 60 * kDayUs);
    store_events(path, turns, clock);
    auto db = store::open_database({path, "off", 5000}, store::Access::kWriter);
    std::atomic<bool> stopping{false};
    jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
    const config::Config cfg = config::defaults();
    for (const std::string& name : order) {
      for (auto& job : daemon::build_jobs(cfg)) {
        if (job.name != name) continue;
        jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}, nullptr};
        job.run(ctx);
        jobs::refresh_entity_summaries(ctx, daemon::medallion_params(cfg).edge_half_life_s);
      }
    }
    return db.execAndGet("SELECT summary_text FROM entities WHERE canonical_key = 'person:ana'")
        .getString();
  };
  test::TempDir dir;
  const std::string facts_first = summary_after(dir.file("a.db"), {"facts", "cluster"});
  const std::string cluster_first = summary_after(dir.file("b.db"), {"cluster", "facts"});
  CHECK(facts_first == cluster_first);
  // The current residence first (an attribute), then the dated facts, newest first; the
  // superseded Boston fact is not listed.
  CHECK_THAT(facts_first,
             Catch::Contains(" Known: Ana moved to Denver in April 2023 (2023-04-01); Ana went to "
                             "a pottery class on 19 May 2023 (2023-05-19); "));
  CHECK_THAT(facts_first, !Catch::Contains("Boston"));
}

TEST_CASE("recall returns the current facts about the entities a question names") {
  test::TempDir dir;
  const std::string path = dir.file("f.db");
  FakeClock clock(kMonday + 60 * kDayUs);
  store_events(path,
               {turn("a1", "Ana", "I live in Boston with two cats.", "2023-01-10T09:00:00Z"),
                turn("a2", "Ana", "I moved to Denver last month.", "2023-05-08T09:00:00Z"),
                turn("b1", "Ben", "I live in Oslo near the fjord.", "2023-05-08T09:05:00Z")},
               clock);
  run_job(path, clock);
  {
    auto db = store::open_database({path, "off", 5000}, store::Access::kWriter);
    store::index_all_pending(db);
    std::atomic<bool> stopping{false};
    jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
    jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}, nullptr};
    jobs::run_clustering(ctx, daemon::cluster_params(config::defaults()));
  }
  auto db = store::open_database({path, "normal", 5000}, store::Access::kReader);
  jobs::register_sql_functions(db, daemon::vitality_params(config::defaults().decay));
  recall::Recaller recaller(db, daemon::recall_params(config::defaults(), nullptr));
  recall::RecallRequest request;
  request.text = "Where does Ana live now?";
  request.ns = "talk";
  auto answer = recaller.recall(request, recall::ReadScope{}, clock.now_us());
  REQUIRE(std::holds_alternative<recall::RecallResponse>(answer));
  std::vector<std::string> facts;
  for (const auto& d : std::get<recall::RecallResponse>(answer).derived) {
    if (d.kind == "fact") facts.push_back(d.title + ": " + d.text);
  }
  // Ana's superseded Boston fact and Ben's facts are not candidates.
  CHECK(facts == std::vector<std::string>{"Ana, 2023-04-01: Ana moved to Denver in April 2023."});
}
