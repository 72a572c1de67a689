// Entities' pure rules: canonical keys, extraction from every source, Hebbian edge strength,
// personalised PageRank and the tokenizer.

#include <catch2/catch.hpp>

#include "support/entities_fixture.hpp"

using namespace reflectd;
using nlohmann::json;
using namespace reflectd::test::entities_fixture;

TEST_CASE("canonical keys: NFC, case folding, trimming, paths keep their case") {
  // "Mélanie" with a combining acute accent and with the precomposed letter are one key.
  CHECK(text::canonical_key("person:Me\xCC\x81lanie") ==
        std::optional<std::string>("person:m\xC3\xA9lanie"));
  CHECK(text::canonical_key("person:M\xC3\xA9LANIE.") ==
        std::optional<std::string>("person:m\xC3\xA9lanie"));
  CHECK(text::canonical_key("Person:  Ana   Lima ") ==
        std::optional<std::string>("person:ana lima"));
  CHECK(text::canonical_key("repo:Stra\xC3\x9F"
                            "e") == std::optional<std::string>("repo:strasse"));
  CHECK(text::canonical_key("file:./src//Ctx.cpp") ==
        std::optional<std::string>("file:src/Ctx.cpp"));
  CHECK(text::canonical_key("file:src/a/../b.c:42") == std::optional<std::string>("file:src/b.c"));
  CHECK_FALSE(text::canonical_key("no colon"));
  CHECK_FALSE(text::canonical_key("person:"));
  CHECK_FALSE(text::canonical_key("bad type!:x"));
  CHECK(text::normalize_path("(src/ctx.cpp),") == "src/ctx.cpp");
  CHECK(text::looks_like_file_path("src/socket_base.cpp"));
  CHECK(text::looks_like_file_path("Makefile.am"));
  CHECK(text::looks_like_file_path("doc/Makefile"));
  CHECK_FALSE(text::looks_like_file_path("e.g."));
  CHECK_FALSE(text::looks_like_file_path("v4.3.4"));
  CHECK_FALSE(text::looks_like_file_path("https://github.com/zeromq/libzmq/pull/3537"));
  CHECK(text::first_directory("src/ctx.cpp") == "src");
  CHECK(text::first_directory("ctx.cpp").empty());
}

TEST_CASE("extraction: every source, in order of trust") {
  const json context = {{"target", "socket_engine"},
                        {"files", {"src/ctx.cpp", "include/zmq.h", "NEWS"}},
                        {"tool", "open"}};
  const json entities = {"repo:libzmq", "person:Ana"};
  const auto e =
      extract("commit_change",
              "ctx: fix shutdown race in src/socket_base.cpp\n\nReported by @bluca, see repo:czmq "
              "and ZeroMQ Guide. Mail sustrik@250bpm.com.\n\nSigned-off-by: Martin Sustrik "
              "<sustrik@250bpm.com>",
              context, entities, json(), "dev-1234");
  const auto k = keys(e);
  const std::vector<std::string> expected{"repo:libzmq",
                                          "person:ana",
                                          "component:socket_engine",
                                          "agent:dev-1234",
                                          "tool:open",
                                          "file:src/ctx.cpp",
                                          "module:src",
                                          "file:include/zmq.h",
                                          "module:include",
                                          "file:NEWS",
                                          "file:src/socket_base.cpp",
                                          "repo:czmq",
                                          "person:bluca",
                                          "component:ctx",
                                          "person:martin sustrik",
                                          "name:zeromq guide"};
  CHECK(k == expected);
  CHECK(e.mentions[0].source == text::Source::kExplicit);
  CHECK(e.mentions[0].primary);
  CHECK(e.mentions[2].source == text::Source::kTarget);
  CHECK_FALSE(e.mentions[3].primary);  // the agent
  CHECK(e.mentions[5].source == text::Source::kFiles);
  CHECK(e.mentions[10].source == text::Source::kContentPath);
  CHECK_FALSE(has(k, "person:250bpm.com"));  // e-mail addresses are not @mentions
}

TEST_CASE("extraction: speakers, capitalised runs, SWE-agent paths and aliases") {
  const auto chat =
      extract("conversation", "Melanie: I moved the Berlin Office meeting.\nThe plan stays.");
  CHECK(keys(chat) == std::vector<std::string>{"person:melanie", "name:berlin office"});
  // A greeting is not part of the name it opens.
  CHECK(keys(extract("conversation", "Melanie: Hey Caroline, thanks! Wow Jon did it.")) ==
        std::vector<std::string>{"person:melanie", "name:caroline", "name:jon"});
  // "The" starts a sentence and is a stop word; "Problem:" is a label, not a speaker.
  CHECK(keys(extract("note", "Problem: it fails. The cause is unknown.")).empty());

  const auto observed = extract(
      "result",
      "[File: /marshmallow-code__marshmallow/src/marshmallow/fields.py (1985 lines total)]\n"
      "(Open file: /marshmallow-code__marshmallow/src/marshmallow/fields.py)\n"
      "(Current directory: /marshmallow-code__marshmallow)",
      json(), json{"file:/marshmallow-code__marshmallow/src/marshmallow/fields.py"});
  CHECK(keys(observed) == std::vector<std::string>{"file:src/marshmallow/fields.py", "module:src"});
  REQUIRE(observed.aliases.size() == 1);
  CHECK(observed.aliases[0].alias ==
        "file:/marshmallow-code__marshmallow/src/marshmallow/fields.py");
  CHECK(observed.aliases[0].canonical_key == "file:src/marshmallow/fields.py");
}

TEST_CASE("extraction: a speaker is one party; day and month names are no entities") {
  const auto turn = extract("conversation", "Melanie: Hey Caroline! We went camping in May.",
                            json(), json(), json(), "Melanie");
  CHECK(keys(turn) == std::vector<std::string>{"agent:melanie", "person:melanie", "name:caroline"});
  std::vector<std::string> aliases;
  for (const auto& a : turn.aliases) aliases.push_back(a.alias + ">" + a.canonical_key);
  CHECK(aliases ==
        std::vector<std::string>{"agent:melanie>person:melanie", "name:melanie>person:melanie"});
  // A speaker who is not the publishing agent is not aliased to it.
  const auto quoted =
      extract("conversation", "Melanie: see you Friday", json(), json(), json(), "Caroline");
  CHECK(keys(quoted) == std::vector<std::string>{"agent:caroline", "person:melanie"});
  REQUIRE(quoted.aliases.size() == 1);
  CHECK(quoted.aliases[0].alias == "name:melanie");
}

TEST_CASE("extraction: explicit relations, declared aliases and Problem:/Solution: edges") {
  const json relations =
      json::array({{{"predicate", "depends_on"}, {"target", "repo:libsodium"}, {"weight", 0.5}},
                   {{"predicate", "alias_of"}, {"target", "person:Melanie"}}});
  const auto e = extract("decision", "We keep it.", json(), json{"person:Mel"}, relations);
  REQUIRE(e.relations.size() == 1);
  CHECK(e.relations[0].source_key == "person:mel");
  CHECK(e.relations[0].target_key == "repo:libsodium");
  CHECK(e.relations[0].rel_type == "depends_on");
  CHECK(e.relations[0].weight == 0.5);
  // The person's bare name first (from the mention), then the declared alias.
  REQUIRE(e.aliases.size() == 2);
  CHECK(e.aliases[0].alias == "name:mel");
  CHECK(e.aliases[0].canonical_key == "person:mel");
  CHECK(e.aliases[1].alias == "person:mel");
  CHECK(e.aliases[1].canonical_key == "person:melanie");

  const auto ps =
      extract("commit_change",
              "Problem: src/tcp.cpp drops frames on Windows\n\nSolution: retry in src/signaler.cpp",
              json{{"files", {"src/tcp.cpp", "src/signaler.cpp"}}});
  std::vector<std::string> edges;
  for (const auto& r : ps.relations)
    edges.push_back(r.source_key + " " + r.rel_type + " " + r.target_key);
  CHECK(edges == std::vector<std::string>{"file:src/tcp.cpp solved_by file:src/signaler.cpp",
                                          "name:windows solved_by file:src/signaler.cpp"});
}

namespace {

// Everything an extraction holds, as text, to compare two of them exactly.
std::string extraction_text(const text::Extraction& e) {
  std::ostringstream out;
  for (const auto& m : e.mentions) {
    out << "m " << m.key << '|' << m.type << '|' << m.display << '|' << text::to_string(m.source)
        << '|' << m.primary << '\n';
  }
  for (const auto& r : e.relations) {
    out << "r " << r.source_key << '|' << r.target_key << '|' << r.rel_type << '|'
        << json(r.weight).dump() << '\n';
  }
  for (const auto& a : e.aliases) out << "a " << a.alias << '|' << a.canonical_key << '\n';
  return out.str();
}

// extract_entities() on the JSON columns as the cluster job reads them (EventJsonReader),
// and on the same texts parsed whole by nlohmann (as it read them before).
void check_same_extraction(jobs::EventJsonReader& reader, const std::string& kind,
                           const std::string& content, const std::optional<std::string>& context,
                           const std::optional<std::string>& entities,
                           const std::optional<std::string>& relations) {
  auto whole = [](const std::optional<std::string>& text) {
    return text ? json::parse(*text, nullptr, false) : json();
  };
  const json c1 = reader.extraction_context(context);
  const json e1 = reader.extraction_entities(entities);
  const json r1 = reader.extraction_relations(relations);
  const json c2 = whole(context);
  const json e2 = whole(entities);
  const json r2 = whole(relations);
  INFO(kind << " " << context.value_or("-") << " " << entities.value_or("-") << " "
            << relations.value_or("-"));
  REQUIRE(extraction_text(text::extract_entities({kind, content, "agent-1", &c1, &e1, &r1, ""})) ==
          extraction_text(text::extract_entities({kind, content, "agent-1", &c2, &e2, &r2, ""})));
}

}  // namespace

TEST_CASE("extraction: the JSON columns read with simdjson mean what nlohmann read") {
  jobs::EventJsonReader reader;
  SECTION("odd texts: repeated keys, other types, 90-bit integers, invalid JSON") {
    const std::vector<std::optional<std::string>> contexts = {
        std::nullopt,
        R"({"target":"src","target":"lib","tool":"bash","files":["a/x.c"],"files":["b/y.c",7]})",
        R"({"target":7,"tool":["bash"],"files":"a/x.c"})",
        R"({"target":"big","n":1234567890123456789012345678,"files":["c/z.c"]})",
        R"(["not","an","object"])",
        R"({"target":"cut")",
        R"("text")",
        R"({"target":"lone\ud800surrogate","tool":"bash"})",
        R"({"target":"fine","x":"\udc00","files":["d/w.c"]})",
        "{\"target\":\"bad \xff byte\",\"tool\":\"make\"}",
    };
    const std::vector<std::optional<std::string>> entities = {
        std::nullopt,
        R"(["file:src/a.c","person:Mel",3,null,{"k":"v"},"repo:zmq"])",
        R"({"file":"src/a.c"})",
        R"(["person:Ann", 99999999999999999999999999])",
        R"(not json)",
    };
    const std::vector<std::optional<std::string>> relations = {
        std::nullopt,
        R"([{"predicate":"depends_on","target":"repo:a","weight":0.25,"weight":2},"x",
            {"predicate":"USES","target":5,"target_id":"repo:b","weight":"high"},
            {"predicate":"alias_of","target":"person:Mel"},
            {"predicate":"calls","target_id":"tool:make","weight":18446744073709551615}])",
        R"([{"predicate":"p","target":"repo:c","weight":1e400}])",
        R"({"predicate":"depends_on"})",
    };
    for (const auto& c : contexts) {
      for (const auto& e : entities) {
        for (const auto& r : relations) {
          check_same_extraction(reader, "decision", "Problem: a.c fails\nSolution: fix b.c", c, e,
                                r);
        }
      }
    }
  }
  SECTION("every event of the real streams") {
    std::size_t events = 0;
    for (const char* name : {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"}) {
      for (const std::string& line : test::corpus_lines(name)) {
        const json event = json::parse(line);
        auto text_of = [&](const char* key) -> std::optional<std::string> {
          if (!event.contains(key) || event[key].is_null()) return std::nullopt;
          return event[key].dump();
        };
        check_same_extraction(reader, event.value("kind", ""), event.value("content", ""),
                              text_of("context"), text_of("entities"), text_of("relations"));
        ++events;
      }
    }
    CHECK(events == 9052);
  }
}

TEST_CASE("Hebbian edge strength and its closed-form decay") {
  const std::int64_t h = 3600;
  CHECK(jobs::hebbian_step(0.0, 0, 0, 0.1, 1.0, h) == Approx(0.1));
  CHECK(jobs::hebbian_step(0.1, 0, 0, 0.1, 1.0, h) == Approx(0.19));
  // One half-life later the base halves before the step.
  CHECK(jobs::hebbian_step(0.8, 0, h * kSecond, 0.1, 1.0, h) == Approx(0.4 + 0.1 * 0.6));
  CHECK(jobs::edge_strength_at(0.8, 0, 2 * h * kSecond, h) == Approx(0.2));
  CHECK(jobs::edge_strength_at(0.8, 10, 5, h) == 0.8);  // a future reference: no decay
}

TEST_CASE("personalised PageRank: known values and determinism") {
  // A 3-cycle is symmetric: every vertex gets 1/3 whatever the damping.
  jobs::Csr cycle{{0, 1, 2, 3}, {1, 2, 0}, {1.0, 1.0, 1.0}};
  const std::vector<double> uniform{1, 1, 1};
  for (double x : jobs::personalized_pagerank(cycle, uniform, 0.85, 100, 1e-12))
    CHECK(x == Approx(1.0 / 3));
  // Two vertices pointing at a sink (dangling: its mass returns through v).
  jobs::Csr star{{0, 1, 2, 2}, {2, 2}, {1.0, 1.0}};
  std::int64_t iterations = 0;
  const auto r = jobs::personalized_pagerank(star, uniform, 0.85, 100, 1e-12, &iterations);
  // Fixed point: x0 = x1 = a, x2 = b with a = 0.15/3 + 0.85 b/3 and b = 0.15/3 + 0.85 (2a + b/3).
  CHECK(r[0] == Approx(r[1]));
  CHECK(r[0] + r[1] + r[2] == Approx(1.0));
  CHECK(r[0] == Approx(0.05 + 0.85 * r[2] / 3));
  CHECK(iterations < 100);
  CHECK(jobs::personalized_pagerank(star, uniform, 0.85, 100, 1e-12) == r);  // bit for bit
  // Personalisation pulls rank towards the preferred vertex.
  const auto biased =
      jobs::personalized_pagerank(cycle, std::vector<double>{1, 0, 0}, 0.85, 100, 1e-12);
  CHECK(biased[0] > biased[1]);
  CHECK(biased[1] > biased[2]);
  jobs::ImportanceParams p;
  CHECK(jobs::blend_importance(1, 1, 1, p) == Approx(1.0));
  CHECK(jobs::blend_importance(1, 0, 0, p) == Approx(0.4));
}

TEST_CASE("tokenizer: Unicode, stop words, stems, no hashes") {
  text::Tokenizer tokenizer;
  std::vector<std::string> stems;
  for (const auto& [stem, surface] :
       tokenizer.terms("The Sockets were CLOSED by zmq_close(); GRÖSSE 4ed70a93 42"))
    stems.push_back(stem);
  CHECK(stems == std::vector<std::string>{"socket", "close", "zmq", "close", "grösse"});
  CHECK(jobs::cosine({{"a", 1.0}, {"b", 1.0}}, {{"a", 1.0}, {"b", 1.0}}) == Approx(1.0));
  CHECK(jobs::cosine({{"a", 1.0}}, {{"b", 1.0}}) == 0.0);
}
