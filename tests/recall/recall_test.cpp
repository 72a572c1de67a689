// The read library (recall/): query parsing, recall's stages and fusion,
// context's budget, on small hand-made corpora in real SQLite files.

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <fstream>
#include <limits>
#include <map>

#include "bus/event_decoder.hpp"
#include "common/clock.hpp"
#include "common/timestamp.hpp"
#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "jobs/clustering.hpp"
#include "jobs/sql_functions.hpp"
#include "recall/context.hpp"
#include "recall/query.hpp"
#include "recall/recall.hpp"
#include "store/database.hpp"
#include "store/event_store.hpp"
#include "store/fts_index.hpp"
#include "support/daemon_fixture.hpp"
#include "support/temp_dir.hpp"
#include "text/porter_stemmer.hpp"
#include "text/time_expressions.hpp"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace {

using namespace reflectd;
using nlohmann::json;

// Monday 8 May 2023, 13:57 UTC.
const std::int64_t kMonday = *parse_rfc3339_us("2023-05-08T13:57:00Z");

}  // namespace

TEST_CASE("the porter stemmer is FTS5's: the index's terms for query words") {
  text::PorterStemmer stemmer;
  CHECK(stemmer.stem("fixed") == "fix");
  CHECK(stemmer.stem("connections") == "connect");
  CHECK(stemmer.stem("running") == "run");
  CHECK(stemmer.stem("generalization") == "gener");
}

TEST_CASE("questions become terms, phrases and a time signal; user text is never FTS syntax") {
  const auto q = recall::parse_query("When did Caroline go to the LGBTQ support group?", kMonday);
  CHECK(q.terms == std::vector<std::string>{"caroline", "go", "lgbtq", "support", "group"});
  CHECK(q.phrases == std::vector<std::string>{"caroline go", "lgbtq support", "support group"});
  CHECK(q.asks_when);
  CHECK(recall::fts_match({"a1", "b"}, {"a1 b"}) == R"("a1" OR "b" OR "a1 b")");
  CHECK(recall::fts_scoped_match(R"("a")", "") == R"(content : ("a"))");
  CHECK(recall::fts_scoped_match(R"("a")", "locomo-conv.26") ==
        R"(namespace : "locomo conv 26" AND content : ("a"))");

  const auto hostile = recall::parse_query(R"(NEAR("x" y) OR col:* AND -z ^w)", kMonday);
  CHECK(hostile.terms == std::vector<std::string>{"near", "col"});
  CHECK_FALSE(hostile.asks_when);
  CHECK(recall::parse_query("the of and it", kMonday).terms.empty());
  CHECK(recall::parse_query("what happened in May 2023?", kMonday).time.size() == 1);
}

TEST_CASE("questions: durations, time bounds and the two sides of a span") {
  CHECK(recall::parse_query("How long has Melanie been practicing art?", kMonday).asks_when);
  CHECK(recall::parse_query("How many weeks passed between A and B?", kMonday).asks_when);
  CHECK(recall::parse_query("In which day did it rain?", kMonday).asks_when);
  CHECK_FALSE(recall::parse_query("How many cats does Ana have?", kMonday).asks_when);

  // "as of", "by", "until": the state at that time, so the range opens at the epoch.
  const auto as_of = recall::parse_query("What was Ana doing as of December 2022?", kMonday);
  REQUIRE(as_of.time.size() == 1);
  CHECK(as_of.time[0].range.from_us == 0);
  CHECK(as_of.time[0].range.to_us == *parse_rfc3339_us("2023-01-01T00:00:00Z"));
  CHECK(as_of.time[0].range.label == "up to December 2022");
  const auto by = recall::parse_query("How many games had Nate won by July 10, 2022?", kMonday);
  CHECK(by.time[0].range.label == "up to 10 July 2022");
  const auto in = recall::parse_query("What did Nate win in July 2022?", kMonday);
  CHECK(in.time[0].range.label == "July 2022");

  const auto between =
      recall::parse_query("How many weeks passed between Maria adopting Coco and Shadow?", kMonday);
  CHECK(between.sides ==
        std::vector<std::vector<std::string>>{{"maria", "adopting", "coco"}, {"shadow"}});
  const auto before = recall::parse_query(
      "How long had Nate had his turtles before he got the third one?", kMonday);
  CHECK(before.sides ==
        std::vector<std::vector<std::string>>{{"nate", "turtles"}, {"got", "third", "one"}});
  // A side that is a date makes a time range, not a span of two events.
  CHECK(recall::parse_query("Where was John between August 11 and August 15 2023?", kMonday)
            .sides.empty());
  CHECK(recall::parse_query("How long did it last after 3 June 2023?", kMonday).sides.empty());
  CHECK(recall::parse_query("What did Ana bake after the party?", kMonday).sides.empty());
}

namespace {

// A conversation in namespace "talk" (Ana and Ben, two sessions a week apart) and a note in
// namespace "other"; stored, indexed and passed through the cluster job (entities).
struct Corpus {
  test::TempDir dir;
  std::string path = dir.file("r.db");
  FakeClock clock{kMonday + std::int64_t{86'400} * 1'000'000 * 30};

  Corpus() {
    const std::vector<json> events{
        turn("t1", "Ben", "Ben: Ana, what did you do on the weekend?", "s1", 1,
             "2023-05-08T10:00:00Z"),
        turn("t2", "Ana", "Ana: I baked a lemon cake yesterday for my sister.", "s1", 2,
             "2023-05-08T10:00:30Z"),
        turn("t3", "Ben", "Ben: Nice! I baked bread.", "s1", 3, "2023-05-08T10:01:00Z"),
        turn("t4", "Ana", "Ana: The garden is blooming and the tulips are out.", "s2", 1,
             "2023-05-15T09:00:00Z"),
        turn("t5", "Ben", "Ben: Tulips are my favourite.", "s2", 2, "2023-05-15T09:00:30Z"),
        json{{"kind", "task"},
             {"id", "o1"},
             {"namespace", "other"},
             {"content", "Bake the lemon cake recipe for the party"},
             {"timestamp", "2023-05-01T10:00:00Z"}},
    };
    // Namespace "span": one event of Shadow among many of Coco; per turn its speaker, its
    // words and its episode, the turns of an episode 30 s apart from 10:00 on its day.
    const std::vector<std::array<const char*, 4>> span{
        {"Ana", "I adopted a puppy today, her name is Coco!", "p1", "2023-06-01"},
        {"Ben", "Coco! Adopting a puppy is a big step. How is Coco?", "p1", "2023-06-01"},
        {"Ana", "Coco is great, adopting Coco was the best choice.", "p1", "2023-06-01"},
        {"Ben", "Coco and adopting, adopting and Coco: I love it.", "p1", "2023-06-01"},
        {"Ana", "Coco, Coco, Coco. Adopting her changed my days.", "p2", "2023-06-20"},
        {"Ben", "Is Coco still the only one you adopted?", "p2", "2023-06-20"},
        {"Ana", "Coco loves the park. Adopting again is on my mind.", "p2", "2023-06-20"},
        {"Ben", "Adopting twice? Coco would like a friend.", "p2", "2023-06-20"},
        {"Ana", "Coco and adopting dogs, adopting Coco, that is my week.", "p3", "2023-07-13"},
        {"Ben", "Coco is lucky that you were adopting her.", "p3", "2023-07-13"},
        {"Ben",
         "So the new one is called Shadow, and the house will be louder now with two dogs, the "
         "walks longer, the food bill bigger and the nights much shorter for you.",
         "p4", "2023-07-20"},
    };
    std::vector<json> all = events;
    std::map<std::string, int> in_episode;
    for (std::size_t i = 0; i < span.size(); ++i) {
      const auto& [who, words, episode, day] = span[i];
      const int n = in_episode[episode]++;
      const std::string ts = std::string(day) + "T10:0" + std::to_string(n / 2) + ":" +
                             (n % 2 == 0 ? "00" : "30") + "Z";
      all.push_back(turn("p" + std::to_string(i + 1), who, std::string(who) + ": " + words, episode,
                         n + 1, ts, "span"));
    }
    {
      auto db = store::open_database({path, "off", 5000}, store::Access::kWriter);
      store::EventStore store(db);
      bus::EventDecoder decoder(clock);
      SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
      for (const json& e : all) {
        auto decoded = decoder.decode(e.dump(), 1 << 20);
        REQUIRE(decoded.events.size() == 1);
        REQUIRE(decoded.events[0].event);
        store::EventRecord row = std::move(*decoded.events[0].event);
        store.insert(row, store::resolve_lifecycle(row, store::DecayProfiles{}));
      }
      transaction.commit();
      store::index_all_pending(db);
    }
    auto db = store::open_database({path, "off", 5000}, store::Access::kWriter);
    std::atomic<bool> stopping{false};
    jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
    jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}, nullptr};
    jobs::run_clustering(ctx, daemon::cluster_params(config::defaults()));
  }

  static json turn(const std::string& id, const std::string& who, const std::string& text,
                   const std::string& episode, int sequence, const std::string& ts,
                   const std::string& ns = "talk") {
    return {{"kind", "prompt"},
            {"id", id},
            {"namespace", ns},
            {"agent_id", who},
            {"content", text},
            {"episode_id", episode},
            {"sequence_number", sequence},
            {"timestamp", ts}};
  }
};

struct Reader {
  SQLite::Database db;
  model::VitalityParams vitality = daemon::vitality_params(config::defaults().decay);
  recall::Recaller recaller;
  explicit Reader(const std::string& path)
      : db(store::open_database({path, "normal", 5000}, store::Access::kReader)),
        recaller((jobs::register_sql_functions(db, vitality), db),
                 daemon::recall_params(config::defaults(), nullptr)) {}
};

std::vector<std::string> ids(const recall::RecallResponse& r) {
  std::vector<std::string> out;
  for (const auto& hit : r.results) out.push_back(hit.id);
  return out;
}

recall::RecallResponse ask(Reader& reader, const Corpus& corpus, const std::string& text,
                           const std::string& ns = "talk") {
  recall::RecallRequest request;
  request.text = text;
  request.ns = ns;
  auto answer = reader.recaller.recall(request, recall::ReadScope{}, corpus.clock.now_us());
  if (auto* error = std::get_if<recall::RecallError>(&answer)) FAIL(error->message);
  return std::get<recall::RecallResponse>(answer);
}

}  // namespace

TEST_CASE("recall: stemming, speaker priming, episode neighbours and the time signal") {
  Corpus corpus;
  Reader reader(corpus.path);

  // "bake" finds "baked" (porter); Ana is a speaker of the namespace, so her turn leads and
  // her name leaves the lexical query; t1 (no "bake") is reached as t2's episode neighbour.
  const auto baked = ask(reader, corpus, "What did Ana bake?");
  REQUIRE(baked.results.size() >= 3);
  CHECK(ids(baked)[0] == "t2");
  CHECK(ids(baked)[1] == "t3");
  CHECK(baked.expanded_terms == std::vector<std::string>{"bake"});
  REQUIRE(baked.primed_entities.size() >= 1);
  // Her agent and her "Ana:" speaker prefix are one entity, the person.
  CHECK(baked.primed_entities[0].key == "person:ana");
  CHECK(baked.primed_entities[0].speaker);
  const auto& top = baked.results[0];
  CHECK(top.components.speaker == 1);
  // t3 is the shorter match (BM25's length normalisation): the best lexical score is its.
  CHECK(top.components.lexical < 1.0);
  CHECK(baked.results[1].components.lexical == 1.0);
  CHECK(top.why_terms == std::vector<std::string>{"bake"});
  CHECK(top.why_entities == std::vector<std::string>{"agent:ana"});
  CHECK(top.content == "Ana: I baked a lemon cake yesterday for my sister.");
  CHECK_FALSE(top.truncated);
  const auto baked_ids = ids(baked);
  const auto t1 = std::find(baked_ids.begin(), baked_ids.end(), "t1");
  REQUIRE(t1 != baked_ids.end());
  const auto& neighbour = baked.results[static_cast<std::size_t>(t1 - baked_ids.begin())];
  CHECK(neighbour.components.lexical == 0);
  CHECK(neighbour.components.graph > 0);
  CHECK(baked.spreading.hop1_count >= 1);
  // Namespaces do not mix: the other namespace's cake is not here.
  CHECK(std::find(baked_ids.begin(), baked_ids.end(), "o1") == baked_ids.end());

  // A "when" question prefers the turn that holds a time expression.
  const auto when = ask(reader, corpus, "When did Ben bake?");
  const auto when_ids = ids(when);
  const auto t2 = std::find(when_ids.begin(), when_ids.end(), "t2");
  REQUIRE(t2 != when_ids.end());
  CHECK(when.asks_when);
  CHECK(when.results[static_cast<std::size_t>(t2 - when_ids.begin())].components.temporal == 1);

  // Fusion is deterministic: the same question twice gives the same order and scores.
  const auto again = ask(reader, corpus, "What did Ana bake?");
  REQUIRE(again.results.size() == baked.results.size());
  for (std::size_t i = 0; i < again.results.size(); ++i) {
    CHECK(again.results[i].id == baked.results[i].id);
    CHECK(again.results[i].score == baked.results[i].score);
  }
  // Scores never increase down the list.
  for (std::size_t i = 1; i < baked.results.size(); ++i) {
    CHECK(baked.results[i].score <= baked.results[i - 1].score);
  }
}

TEST_CASE("recall: a span question reads both events first; as_of moves relative dates") {
  Corpus corpus;
  Reader reader(corpus.path);
  // Ben's long turn naming Shadow ranks third for the words alone; as a span question's
  // second side it is read second.
  const auto span =
      ask(reader, corpus, "How many weeks passed between Ana adopting Coco and Shadow?", "span");
  REQUIRE(span.results.size() >= 2);
  CHECK(ids(span)[1] == "p11");
  const auto plain = ask(reader, corpus, "What about Ana adopting Coco and Shadow?", "span");
  const auto plain_ids = ids(plain);
  CHECK(std::find(plain_ids.begin(), plain_ids.begin() + 2, "p11") == plain_ids.begin() + 2);

  // The clock is 7 June 2023: "last week" is the week before it, and t2 (8 May) is not in it;
  // as of 15 May, it is.
  const auto now = ask(reader, corpus, "What did Ana bake last week?");
  REQUIRE(now.temporal_range);
  CHECK(now.temporal_range->label == "the week before 7 June 2023");
  REQUIRE(ids(now).at(0) == "t2");
  CHECK(now.results[0].components.temporal == 0);
  recall::RecallRequest request;
  request.text = "What did Ana bake last week?";
  request.ns = "talk";
  request.as_of_us = *parse_rfc3339_us("2023-05-15T12:00:00Z");
  auto answer = reader.recaller.recall(request, recall::ReadScope{}, corpus.clock.now_us());
  REQUIRE(std::holds_alternative<recall::RecallResponse>(answer));
  const auto& moved = std::get<recall::RecallResponse>(answer);
  REQUIRE(moved.temporal_range);
  CHECK(moved.temporal_range->label == "the week before 15 May 2023");
  REQUIRE(ids(moved).at(0) == "t2");
  CHECK(moved.results[0].components.temporal == 1);

  auto parsed = recall::recall_request_from_json({{"text", "x"}, {"as_of", "last week"}});
  REQUIRE(std::holds_alternative<recall::RecallError>(parsed));
  CHECK(std::get<recall::RecallError>(parsed).message ==
        "as_of: must be an RFC 3339 date-time with offset or epoch milliseconds");
}

TEST_CASE("recall refuses bad requests with the field and the rule") {
  Corpus corpus;
  Reader reader(corpus.path);
  auto error_of = [&](const json& request) -> std::string {
    auto parsed = recall::recall_request_from_json(request);
    if (auto* e = std::get_if<recall::RecallError>(&parsed)) return e->message;
    auto answer = reader.recaller.recall(std::get<recall::RecallRequest>(parsed),
                                         recall::ReadScope{}, corpus.clock.now_us());
    if (auto* e = std::get_if<recall::RecallError>(&answer)) return e->message;
    return "";
  };
  CHECK(error_of({{"text", "  "}}) == "text: must not be empty");
  CHECK(error_of(json::object()) == "text: is required (a string)");
  CHECK(error_of({{"text", std::string(5000, 'a')}}) ==
        "text: must be at most 4096 bytes (got 5000)");
  CHECK(error_of({{"text", "the of and"}}) ==
        "text: has no word to search for (only stop words or one-letter words)");
  CHECK(error_of({{"text", "cake"}, {"limit", 0}}) == "limit: must be an integer from 1 to 100");
  CHECK(error_of({{"text", "cake"}, {"offset", -1}}) ==
        "offset: must be an integer from 0 to 1000");
  CHECK(error_of({{"text", "cake"}, {"since", "last tuesday"}}) ==
        "since: must be an RFC 3339 date-time with offset or epoch milliseconds");
  CHECK(error_of({{"text", "cake"}, {"namespace", "nowhere"}}) ==
        "namespace: unknown namespace 'nowhere'");
  CHECK(error_of({{"text", "cake"}, {"kinds", "prompt"}}) == "kinds: must be an array of strings");
  CHECK(error_of({{"text", "cake"}, {"namespace", "talk"}}).empty());
}

TEST_CASE("context: tiers, ids, absolute dates and the token budget") {
  Corpus corpus;
  Reader reader(corpus.path);
  for (const std::int64_t budget : {50, 100, 1000}) {
    recall::ContextRequest request;
    request.recall.text = "What did Ana bake?";
    request.recall.ns = "talk";
    request.max_tokens = budget;
    auto built =
        recall::build_context(reader.recaller, request, recall::ReadScope{}, corpus.clock.now_us());
    REQUIRE(std::holds_alternative<recall::CompressedContext>(built));
    const auto& c = std::get<recall::CompressedContext>(built);
    CHECK(c.total_tokens <= budget);
    CHECK(c.total_tokens == recall::estimate_tokens(c.context_text));
    CHECK(c.context_text.size() <= static_cast<std::size_t>(4 * c.total_tokens));
    REQUIRE_FALSE(c.sources.empty());
    CHECK(c.sources[0] == "t2");
    CHECK(
        c.context_text.starts_with("[t2] 8 May 2023 (prompt, Ana): Ana: I baked a lemon cake "
                                   "yesterday [7 May 2023] for my sister.\n"));
    CHECK(c.hot_count + c.warm_count + c.cold_count == static_cast<std::int64_t>(c.sources.size()));
    // Session 2 shares no word with the question and no episode with a hit.
    if (budget == 1000) CHECK(c.sources == std::vector<std::string>{"t2", "t3", "t1"});
  }
}

TEST_CASE("recall on the libzmq history finds the memory-leak Problem/Solution commits") {
  test::TempDir dir;
  const std::string path = dir.file("z.db");
  FakeClock clock(*parse_rfc3339_us("2026-11-27T00:00:00Z"));
  {
    auto db = store::open_database({path, "off", 5000}, store::Access::kWriter);
    store::EventStore store(db);
    bus::EventDecoder decoder(clock);
    std::ifstream in(std::string(REFLECTD_DATA_DIR) + "/libzmq-commits.jsonl");
    REQUIRE(in);
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    std::string line;
    while (std::getline(in, line)) {
      auto decoded = decoder.decode(line, 1 << 22);
      REQUIRE(decoded.events.size() == 1);
      REQUIRE(decoded.events[0].event);
      store::EventRecord row = std::move(*decoded.events[0].event);
      store.insert(row, store::resolve_lifecycle(row, store::DecayProfiles{}));
    }
    transaction.commit();
    store::index_all_pending(db);
  }
  Reader reader(path);
  recall::RecallRequest request;
  request.text = "how was the memory leak in the socket fixed?";
  request.ns = "libzmq";
  auto answer = reader.recaller.recall(request, recall::ReadScope{}, clock.now_us());
  REQUIRE(std::holds_alternative<recall::RecallResponse>(answer));
  const auto& results = std::get<recall::RecallResponse>(answer).results;
  REQUIRE(results.size() == 10);
  int leaks = 0;
  int problem_solution = 0;
  for (const auto& hit : results) {
    std::string lower = hit.content;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("memory leak") != std::string::npos) ++leaks;
    if (lower.find("memory leak") != std::string::npos &&
        hit.content.find("Problem:") != std::string::npos &&
        hit.content.find("Solution:") != std::string::npos) {
      ++problem_solution;
    }
  }
  CHECK(leaks == 10);
  CHECK(problem_solution >= 1);
  // "fixed" is in more than a tenth of the commits: a collection stop word. The best hit is a
  // socket's leak.
  CHECK(std::get<recall::RecallResponse>(answer).dropped_terms ==
        std::vector<std::string>{"fixed"});
  CHECK(results[0].why_terms == std::vector<std::string>{"memory", "leak", "socket"});
}

TEST_CASE("reads count accesses; the writer adds them in batches, at the latest at stop") {
  test::TempDir dir;
  auto config = test::loopback_config(dir);
  config.daemon.stats_interval_ms = 3'600'000;  // no tick during the test: only stop flushes
  test::disable_background_jobs(config);
  {
    test::RunningDaemon running(config);
    zmq::context_t zmq_context;
    auto ingest =
        test::make_client(zmq_context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));
    auto control =
        test::make_client(zmq_context, zmq::socket_type::dealer, running.endpoints().control.at(0));
    REQUIRE(test::ingest(ingest, R"([
      {"id":"a","kind":"task","namespace":"n","content":"the lighthouse keeper logs the storm"},
      {"id":"b","kind":"task","namespace":"n","content":"the baker opens at dawn"}])")["ok"] ==
            true);
    const json recalled = test::control(
        control, {{"cmd", "recall"}, {"text", "lighthouse storm"}, {"namespace", "n"}});
    REQUIRE(recalled["ok"] == true);
    REQUIRE(recalled["results"].size() == 1);
    const json context =
        test::control(control, {{"cmd", "context"}, {"text", "lighthouse"}, {"namespace", "n"}});
    REQUIRE(context["sources"] == json({"a"}));
    const json got = test::control(control, {{"cmd", "get"}, {"ids", {"a"}}});
    REQUIRE(got["events"].size() == 1);
    // Nothing written yet: reads never write, and the batch waits for the writer.
    CHECK(got["events"][0]["access_count"] == 0);
    CHECK(test::control(control, {{"cmd", "episode"}, {"episode_id", ""}})["error"] ==
          "episode: episode_id: is required (a non-empty string)");
    CHECK(test::control(control, {{"cmd", "get"}, {"ids", json::array()}})["error"] ==
          "get: ids: must be an array of 1 to 100 event ids (strings)");
    CHECK(running.stop() == 0);
  }
  auto db = store::open_database({config.store.path, "normal", 5000}, store::Access::kReader);
  SQLite::Statement counts(db,
                           "SELECT uid, access_count, last_accessed_us IS NOT NULL FROM events "
                           "ORDER BY uid");
  std::vector<std::string> rows;
  while (counts.executeStep()) {
    rows.push_back(counts.getColumn(0).getString() + ":" + counts.getColumn(1).getString() + ":" +
                   counts.getColumn(2).getString());
  }
  // a: recall, context and get; b: never returned.
  CHECK(rows == std::vector<std::string>{"a:3:1", "b:0:0"});
}

TEST_CASE("recall returns the namespace's derived records beside the events") {
  test::TempDir dir;
  auto config = test::loopback_config(dir);
  test::disable_background_jobs(config);
  test::RunningDaemon running(config);
  zmq::context_t zmq_context;
  auto ingest =
      test::make_client(zmq_context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));
  auto control =
      test::make_client(zmq_context, zmq::socket_type::dealer, running.endpoints().control.at(0));
  REQUIRE(test::ingest(ingest, R"([
    {"id":"d1","kind":"decision","namespace":"n","content":"Keep the lighthouse lamp lit in storms",
     "context":{"title":"Lamp lit in storms","target":"lighthouse",
                "rationale":"ships need the light most when visibility is low","status":"active"}},
    {"id":"e1","kind":"task","namespace":"n","content":"repaint the harbour wall"}])")["ok"] ==
          true);
  const json recalled = test::control(
      control, {{"cmd", "recall"}, {"text", "why is the lamp lit in storms?"}, {"namespace", "n"}});
  REQUIRE(recalled["ok"] == true);
  REQUIRE(recalled["derived"].size() == 1);
  CHECK(recalled["derived"][0]["kind"] == "knowledge");
  CHECK(recalled["derived"][0]["id"] == "d1");
  CHECK(recalled["derived"][0]["title"] == "Lamp lit in storms");
  CHECK(recalled["derived"][0]["text"] == "ships need the light most when visibility is low");
  CHECK(recalled["derived"][0]["why"]["terms"] == json({"lamp", "lit", "storms"}));
  // The decision's event is recalled as an event too; without a namespace nothing derived.
  CHECK(recalled["results"][0]["id"] == "d1");
  const json everywhere =
      test::control(control, {{"cmd", "recall"}, {"text", "why is the lamp lit in storms?"}});
  CHECK(everywhere["derived"].empty());
}

namespace {

// A WordNet database of seven nouns and one verb in the wndb(5WN) format. "activity" has
// sport, hobby and flower below it (depth 1) and swimming and tulip below those (depth 2);
// athletics has no tag count; "swimming"'s first two senses are natation and the act, so as a
// hyponym of sport (its third sense) it is too rare a reading to count.
void write_small_wordnet(const std::string& dir) {
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
  };
  write("data.noun",
        "  1 This is a licence header line\n"
        "00000100 03 n 01 activity 0 003 ~ 00000200 n 0000 ~ 00000300 n 0000 "
        "~ 00000400 n 0000 | any specific behavior\n"
        "00000200 04 n 02 sport 0 athletics 0 002 ~ 00000500 n 0000 ~ 00000800 n 0000 | "
        "an active diversion\n"
        "00000300 04 n 01 hobby 0 000 | an auxiliary activity\n"
        "00000400 04 n 01 flower 0 001 ~ 00000600 n 0000 | a plant grown for its blossoms\n"
        "00000500 04 n 02 natation 0 swimming 0 000 | the act of swimming\n"
        "00000600 20 n 01 tulip 0 000 | a bulbous plant\n"
        "00000700 04 n 01 swimming 0 000 | a swimming pool visit\n"
        "00000800 04 n 01 swimming 0 000 | a race in water\n");
  write("index.noun",
        "  1 This is a licence header line\n"
        "activity n 1 1 ~ 1 1 00000100\n"
        "athletics n 1 0 1 0 00000200\n"
        "flower n 1 1 ~ 1 1 00000400\n"
        "hobby n 1 0 1 1 00000300\n"
        "natation n 1 0 1 1 00000500\n"
        "sport n 1 1 ~ 1 1 00000200\n"
        "swimming n 3 0 3 1 00000500 00000700 00000800\n"
        "tulip n 1 0 1 1 00000600\n");
  write("data.verb", "00000100 29 v 01 swim 0 000 00 | travel through water\n");
  write("index.verb", "swim v 1 0 1 1 00000100\n");
  write("noun.exc", "");
  write("verb.exc", "swam swim\n");
  write("cntlist.rev",
        "activity%1:04:00:: 1 10\n"
        "sport%1:04:00:: 1 5\n"
        "hobby%1:04:00:: 1 2\n"
        "flower%1:20:00:: 1 7\n"
        "tulip%1:20:00:: 1 1\n"
        "swimming%1:04:00:: 1 3\n"
        "natation%1:04:00:: 1 1\n"
        "swim%2:38:00:: 1 4\n");
}

std::vector<std::string> words(const std::vector<recall::RelatedWord>& related) {
  std::vector<std::string> out;
  out.reserve(related.size());
  for (const auto& r : related) out.push_back(r.word + "/" + std::to_string(r.depth));
  return out;
}

}  // namespace

TEST_CASE("WordNet: morphy, then synonyms and hyponyms by depth and tag count, within limits") {
  test::TempDir dir;
  write_small_wordnet(dir.path().string());
  const auto wn = recall::WordNet::load(dir.path());
  CHECK(wn.synset_count() == 9);

  // "activities" -> activity (the ies -> y rule), which is not itself a related word; by
  // depth, then tag count (descending), then the word: flower (7), sport (5), hobby (2);
  // athletics has no tag count; at depth 2 swimming (3) and natation (1) share sport's
  // hyponym, and the third synset under sport is swimming's third sense: not counted again.
  recall::HyponymLimits limits;
  CHECK(words(wn.hyponyms("activities", limits)) ==
        std::vector<std::string>{"flower/1", "sport/1", "hobby/1", "swimming/2", "natation/2",
                                 "tulip/2"});
  limits.max_depth = 1;
  CHECK(words(wn.hyponyms("activity", limits)) ==
        std::vector<std::string>{"flower/1", "sport/1", "hobby/1"});
  limits.max_depth = 3;
  limits.max_words = 2;
  CHECK(words(wn.hyponyms("activity", limits)) == std::vector<std::string>{"flower/1", "sport/1"});
  // One sense only: swimming's first sense is natation, its second not the sport's hyponym.
  limits = {};
  limits.max_senses = 1;
  CHECK(words(wn.hyponyms("sports", limits)) ==
        std::vector<std::string>{"swimming/1", "natation/1"});
  // A synonym is depth 0; the verb exception list turns "swam" into swim, which has nothing
  // related; unknown words have nothing either.
  CHECK(words(wn.hyponyms("natation", {})) == std::vector<std::string>{"swimming/0"});
  CHECK(wn.hyponyms("swam", {}).empty());
  CHECK(wn.hyponyms("zeppelin", {}).empty());
}

TEST_CASE("WordNet: a missing or malformed database stops the load naming the file") {
  test::TempDir dir;
  CHECK_THROWS_WITH(recall::WordNet::load(dir.path() / "nowhere"),
                    Catch::Contains("nowhere/data.noun") && Catch::Contains("wordnet-base"));
  // The loader checks the files at once (a daemon's start) and loads at the first get().
  CHECK_THROWS_WITH(recall::WordNetLoader(dir.path() / "nowhere"),
                    Catch::Contains("nowhere/data.noun"));
  write_small_wordnet(dir.path().string());
  std::filesystem::remove(dir.path() / "cntlist.rev");
  CHECK_THROWS_WITH(recall::WordNetLoader(dir.path()), Catch::Contains("cntlist.rev"));
  write_small_wordnet(dir.path().string());
  std::ofstream(dir.file("index.verb")) << "swim v one 0 1 1 00000100\n";
  CHECK_THROWS_WITH(recall::WordNet::load(dir.path()),
                    Catch::Contains("index.verb:1") && Catch::Contains("wndb"));
  // A load that fails leaves recall without related words, and says why.
  const recall::WordNetLoader loader(dir.path());
  CHECK(loader.error().empty());
  CHECK(loader.get() == nullptr);
  CHECK_THAT(loader.error(), Catch::Contains("index.verb:1"));
}

TEST_CASE("WordNet: Debian's WordNet 3.0 loads whole and relates everyday words") {
  const std::string debian = "/usr/share/wordnet";  // scripts/install-deps.sh installs it
  const auto wn = recall::WordNet::load(debian);
  CHECK(wn.synset_count() == 82'115 + 13'767);  // WordNet 3.0's noun and verb synsets
  // The two most frequent senses of "sport" and of "book", and what lies below them.
  const auto sports = words(wn.hyponyms("sports", {}));
  const auto books = words(wn.hyponyms("books", {}));
  for (const char* w : {"athletics/0", "swimming/2", "football/2", "tennis/3"}) {
    CHECK(std::find(sports.begin(), sports.end(), w) != sports.end());
  }
  for (const char* w : {"novel/1", "diary/2", "encyclopedia/2"}) {
    CHECK(std::find(books.begin(), books.end(), w) != books.end());
  }
  CHECK(sports.size() <= 64);
}

TEST_CASE("recall: related words find what the question names only by its kind") {
  Corpus corpus;
  test::TempDir dir;
  write_small_wordnet(dir.path().string());
  Reader plain(corpus.path);
  // "flowers" and "love" are in no turn: without WordNet nothing answers.
  CHECK(ask(plain, corpus, "Which flowers does Ben love?").results.empty());

  auto params = daemon::recall_params(config::defaults(), nullptr);
  params.wordnet = std::make_shared<const recall::WordNetLoader>(dir.path());
  auto ask_with = [&](const recall::RecallParams& p) {
    recall::Recaller recaller(plain.db, p);
    recall::RecallRequest request;
    request.text = "Which flowers does Ben love?";
    request.ns = "talk";
    auto answer = recaller.recall(request, recall::ReadScope{}, corpus.clock.now_us());
    REQUIRE(std::holds_alternative<recall::RecallResponse>(answer));
    return std::get<recall::RecallResponse>(answer);
  };
  const auto flowers = ask_with(params);
  CHECK(flowers.related_terms ==
        std::map<std::string, std::vector<std::string>>{{"flowers", {"tulip"}}});
  REQUIRE(flowers.results.size() == 2);
  // Ben's turn first (a speaker the question names), the shorter match scoring 1.
  CHECK(flowers.results[0].id == "t5");
  CHECK(flowers.results[0].components.semantic == 1.0);
  CHECK(flowers.results[0].components.lexical == 0);
  CHECK(flowers.results[0].why_related == std::vector<std::string>{"tulip"});
  CHECK(flowers.results[1].id == "t4");
  CHECK(flowers.results[1].components.semantic > 0);
  CHECK(flowers.results[1].components.semantic < 1);
  CHECK(recall::to_json(flowers)["expanded_query"]["related_terms"] ==
        json{{"flowers", {"tulip"}}});

  // semantic_weight 0 leaves the stage out.
  params.semantic_weight = 0;
  CHECK(ask_with(params).results.empty());
}
