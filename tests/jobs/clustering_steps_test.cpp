// The cluster job's steps one by one (jobs/clustering_*.hpp), on small hand-made inputs with
// exact expected values; cluster_job_test.cpp and consolidation_test.cpp run the whole job on the
// real streams.

#include <catch2/catch.hpp>

#include <SQLiteCpp/SQLiteCpp.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jobs/clustering.hpp"
#include "jobs/clustering_assign.hpp"
#include "jobs/clustering_clusters.hpp"
#include "jobs/clustering_index.hpp"
#include "jobs/clustering_terms.hpp"
#include "jobs/clustering_text.hpp"
#include "jobs/clustering_vectorize.hpp"
#include "support/db_dump.hpp"
#include "support/temp_dir.hpp"
#include "text/tokenizer.hpp"

using namespace reflectd;
using namespace reflectd::jobs::clustering;

namespace {

// A migrated database without foreign-key checks, so that a step's rows need no events.
SQLite::Database clustering_scratch_database(const test::TempDir& dir) {
  auto db = test::open_writer(dir.file("steps.db"));
  db.exec("PRAGMA foreign_keys = OFF");
  return db;
}

std::vector<std::string> scanned(std::string_view text) {
  std::vector<std::string> out;
  text::Tokenizer::scan(text, [&out](const std::string& token) { out.push_back(token); });
  return out;
}

}  // namespace

TEST_CASE("clustering steps: the tokenizer keeps words, drops stop words, digits and hashes") {
  CHECK(scanned("Fix the_socket 0123456 deadbeef12 \xC3\x9Cn\xC3\xAF"
                "code x 42 ab") == std::vector<std::string>{"fix", "socket",
                                                            "\xC3\xBCn\xC3\xAF"
                                                            "code",
                                                            "ab"});
  CHECK(scanned("").empty());
  CHECK(scanned("cafe123").empty());  // hex-like: all hex, a digit, 7 code points
  CHECK(scanned("cafe12") == std::vector<std::string>{"cafe12"});  // 6 code points: kept
  CHECK(scanned("cafe") == std::vector<std::string>{"cafe"});      // no digit: a word
  CHECK(text::Tokenizer::is_stop_word("merge"));
  CHECK_FALSE(text::Tokenizer::is_stop_word("socket"));
  text::Tokenizer tokenizer;
  CHECK(tokenizer.stem("connections") == "connect");
  CHECK(tokenizer.stem("running") == "run");
  const auto terms = tokenizer.terms("Running connections");
  REQUIRE(terms.size() == 2);
  CHECK(terms[0] == std::pair<std::string, std::string>{"run", "running"});
  CHECK(terms[1] == std::pair<std::string, std::string>{"connect", "connections"});
}

TEST_CASE("clustering steps: summaries, trailers and the vectorized text") {
  CHECK(summary_of("  first line \n\n\tsecond\r\nthird") == "first line second third");
  CHECK(summary_of(" \n\t\n").empty());
  CHECK(summary_of(std::string(400, 'a')) == std::string(300, 'a'));
  std::string accents = "a";
  for (int i = 0; i < 200; ++i) accents += "\xC3\xA9";
  CHECK(summary_of(accents).size() == 299);  // byte 300 is inside an "é": cut before it

  CHECK(without_trailers("Fix it\nSigned-off-by: A <a@b>\n  reviewed-BY: C\nbody") ==
        "Fix it\nbody\n");
  CHECK(without_trailers("(cherry picked from commit 123)\nx") == "x\n");
  CHECK(without_trailers("").empty());
  CHECK(vectorized_text(std::string(20000, 'a')) == std::string(kMaxVectorizedBytes, 'a') + "\n");
}

TEST_CASE("clustering steps: interned terms, their order and the vector arithmetic") {
  TermSpace terms;
  const TermId b = terms.intern("b");
  const TermId a = terms.intern("a");
  const TermId c = terms.intern("c");
  CHECK(b == 0);
  CHECK(a == 1);
  CHECK(c == 2);
  CHECK(terms.intern("b") == 0);
  CHECK(terms.size() == 3);

  IdVector v = {{b, 1.0}, {c, 1.0}, {a, 1.0}};
  terms.sort_by_text(v);
  CHECK(v == IdVector{{a, 1.0}, {b, 1.0}, {c, 1.0}});
  // Ties: the smaller term ("a" before "c").
  const IdVector weights = {{a, 0.5}, {b, 0.9}, {c, 0.5}};
  CHECK(terms.heaviest(weights, 2) == IdVector{{a, 0.5}, {b, 0.9}});
  CHECK(terms.heaviest_terms(weights, 2) == std::vector<TermId>{b, a});
  CHECK(terms.heaviest_terms(weights, 5) == std::vector<TermId>{b, a, c});
  CHECK(terms.sum({{a, 1.0}, {b, 2.0}}, {{b, 3.0}, {c, 4.0}}) ==
        IdVector{{a, 1.0}, {b, 5.0}, {c, 4.0}});

  CHECK(norm({{a, 3.0}, {b, 4.0}}) == 5.0);
  CHECK(terms.cosine({{a, 3.0}, {b, 4.0}}, {{a, 3.0}, {b, 4.0}}) == 1.0);
  CHECK(terms.cosine({{a, 1.0}}, {{b, 1.0}}) == 0.0);
  CHECK(terms.cosine({}, {{b, 1.0}}) == 0.0);
  CHECK(terms.cosine({{a, 1.0}, {b, 1.0}}, {{a, 1.0}}) == 1.0 / std::sqrt(2.0));
  CHECK(jobs::cosine({{"a", 1.0}, {"b", 1.0}}, {{"a", 1.0}}) == 1.0 / std::sqrt(2.0));
  terms.load({{a, 2.0}});
  CHECK(terms.dot_loaded({{a, 3.0}, {c, 5.0}}) == 6.0);
  terms.unload({{a, 2.0}});
  CHECK(terms.dot_loaded({{a, 3.0}}) == 0.0);

  // [u16 length]["a"][0.5 as a little-endian double]
  const std::string blob = terms.encode({{a, 0.5}});
  CHECK(blob == std::string("\x01\x00"
                            "a"
                            "\x00\x00\x00\x00\x00\x00\xE0\x3F",
                            11));
  CHECK(terms.decode(blob.data(), static_cast<int>(blob.size())) == IdVector{{a, 0.5}});
  CHECK(terms.decode(blob.data(), 10).empty());  // a truncated entry is dropped
  const std::string two = terms.encode({{a, 0.25}, {terms.intern("dd"), 1.0}});
  CHECK(terms.decode(two.data(), static_cast<int>(two.size())) ==
        IdVector{{a, 0.25}, {terms.intern("dd"), 1.0}});
}

TEST_CASE("clustering steps: document frequencies and posting windows") {
  test::TempDir dir;
  auto db = clustering_scratch_database(dir);
  TermSpace terms;
  const TermId a = terms.intern("a");
  {
    TermIndex index(db, terms, 2);
    CHECK(index.term("ns", a).df == 0);
    index.count("ns", a, "apples");
    const Term& t = index.count("ns", a, "apple");  // the first surface stays
    CHECK(t.df == 2);
    CHECK(t.surface == "apples");
    for (const auto& [cluster, seq] :
         std::vector<std::pair<std::int64_t, std::int64_t>>{{10, 5}, {11, 6}, {10, 7}, {12, 8}}) {
      index.touch("ns", a, cluster, seq);
    }
    CHECK(index.window("ns", a) == Window{{7, 10}, {8, 12}});
    index.flush("ns");
  }
  CHECK(test::dump(db, "SELECT namespace, term, df, surface FROM cluster_terms") ==
        "ns|a|2|apples|\n");
  // Every touched posting is written; the window reads back the newest candidates_per_term.
  CHECK(test::dump(db,
                   "SELECT term, cluster_id, touched_seq FROM cluster_postings ORDER BY "
                   "cluster_id") == "a|10|7|\na|11|6|\na|12|8|\n");
  terms.reset_namespace_caches();
  TermIndex again(db, terms, 2);
  CHECK(again.term("ns", a).df == 2);
  CHECK(again.term("ns", a).stored);
  CHECK(again.term("other", terms.intern("zz")).df == 0);
  CHECK(again.window("ns", a) == Window{{7, 10}, {8, 12}});
  again.count("ns", a, "x");
  again.flush("ns");  // an UPDATE of the df: the surface stays
  CHECK(test::dump(db, "SELECT df, surface FROM cluster_terms") == "3|apples|\n");
}

TEST_CASE("clustering steps: TF-IDF vectors") {
  test::TempDir dir;
  auto db = clustering_scratch_database(dir);
  TermSpace terms;
  TermIndex index(db, terms, 32);
  Vectorizer vectorizer(terms, index, 24);
  using namespace std::string_literals;
  // appl: tf 2, pear: tf 1; N = 1, df = 1 each: idf = ln(2 / 2) + 1 = 1.
  const IdVector first = vectorizer.vectorize("ns", "apple\0apples\0pear\0"s);
  const double n = std::sqrt((1.0 + std::log(2.0)) * (1.0 + std::log(2.0)) + 1.0);
  REQUIRE(first.size() == 2);
  CHECK(terms.text(first[0].first) == "appl");
  CHECK(first[0].second == (1.0 + std::log(2.0)) / n);
  CHECK(terms.text(first[1].first) == "pear");
  CHECK(first[1].second == 1.0 / n);
  CHECK(index.term("ns", first[0].first).surface == "apple");
  CHECK(vectorizer.documents() == 1);
  CHECK(vectorizer.vectorize("ns", "").empty());
  CHECK(vectorizer.documents() == 1);  // an event without terms counts in no frequency
  CHECK(vectorizer.vectorize("ns", "pear\0"s) == IdVector{{first[1].first, 1.0}});
  CHECK(index.term("ns", first[1].first).df == 2);
  CHECK(vectorizer.documents() == 2);

  // Two terms kept of three: the heaviest, then the smaller of the tied ones.
  Vectorizer two(terms, index, 2);
  two.set_documents(10);
  const IdVector top = two.vectorize("ns", "kiwi\0kiwi\0lime\0fig\0"s);
  REQUIRE(top.size() == 2);
  CHECK(terms.text(top[0].first) == "fig");
  CHECK(terms.text(top[1].first) == "kiwi");
  CHECK(two.documents() == 11);
}

TEST_CASE("clustering steps: seeding, duplicates, members and the rows they write") {
  test::TempDir dir;
  auto db = clustering_scratch_database(dir);
  TermSpace terms;
  TermIndex index(db, terms, 32);
  ClusterStore clusters(db, terms);
  const jobs::ClusterParams params;
  Assigner assigner(params, terms, index, clusters);
  const TermId a = terms.intern("a");
  const TermId b = terms.intern("b");
  const TermId c = terms.intern("c");
  index.count("ns", a, "alpha");
  index.count("ns", b, "beta");
  index.count("ns", c, "gamma");
  const std::vector<std::int64_t> seven = {7};
  const std::vector<std::int64_t> seven_eight = {7, 8};
  const std::vector<std::int64_t> none;
  const std::vector<std::int64_t> nine = {9};
  assigner.assign("ns", {1, 100, "event one", &seven, 0}, {{a, 1.0}});
  // The same vector: a near-duplicate of the medoid (cosine 1 >= 0.95).
  assigner.assign("ns", {2, 50, "event two", &seven_eight, 0}, {{a, 1.0}});
  // Cosine 2/sqrt(5) to the medoid: a member; 7/sqrt(50) to the new centroid {a: 3, b: 1}
  // beats the old medoid's 3/sqrt(10), so it becomes the medoid.
  assigner.assign("ns", {4, 300, "event four\nsecond line", &none, 1}, {{a, 2.0}, {b, 1.0}});
  // No candidate under "c": a cluster of its own.
  assigner.assign("ns", {5, 400, "event five", &nine, 2}, {{c, 1.0}});

  const AssignCounts& counts = assigner.counts();
  CHECK(counts.clusters_created == 2);
  CHECK(counts.facts_assigned == 4);
  CHECK(counts.duplicates_merged == 1);
  CHECK(counts.summaries_generated == 3);
  CHECK(counts.reinforced.empty());  // cluster 1 was created by this assigner
  const Cluster& one = clusters.get(1);
  CHECK(one.centroid == IdVector{{a, 3.0}, {b, 1.0}});
  CHECK(one.medoid == IdVector{{a, 2.0}, {b, 1.0}});
  CHECK(assigner.label_of("ns", one.centroid) == "alpha, beta");

  clusters.flush_members();
  index.flush("ns");
  clusters.flush();
  CHECK(test::dump(db,
                   "SELECT cluster_id, namespace, label, summary_text, medoid_seq, member_count, "
                   "duplicate_count, first_seq, last_seq, first_seen_us, last_seen_us, "
                   "sensitivity FROM clusters ORDER BY cluster_id") ==
        "1|ns|alpha, beta|event four second line|4|2|1|1|4|50|300|low|\n"
        "5|ns|gamma|event five|5|1|0|5|5|400|400|medium|\n");
  // The similarity is the cosine to the centroid of the (unit, in the job) event vector.
  CHECK(test::dump(db,
                   "SELECT seq, cluster_id, role, similarity FROM event_clusters ORDER BY "
                   "seq") ==
        "1|1|member|1.0|\n2|1|duplicate|1.0|\n4|1|member|2.0|\n"
        "5|5|member|1.0|\n");
  CHECK(test::dump(db,
                   "SELECT cluster_id, entity_id, mentions FROM cluster_entities ORDER BY "
                   "cluster_id, entity_id") == "1|7|2|\n1|8|1|\n5|9|1|\n");
  CHECK(test::dump(db,
                   "SELECT term, cluster_id, touched_seq FROM cluster_postings ORDER BY "
                   "term") == "a|1|4|\nb|1|4|\nc|5|5|\n");

  // Read back from the rows: the vectors round-trip exactly.
  clusters.clear();
  const Cluster& read = clusters.get(1);
  CHECK(read.centroid == IdVector{{a, 3.0}, {b, 1.0}});
  CHECK(read.centroid_norm == std::sqrt(10.0));
  CHECK(read.medoid == IdVector{{a, 2.0}, {b, 1.0}});
  CHECK(read.members == 2);
  CHECK(read.duplicates == 1);
  CHECK(read.sensitivity == 1);
  CHECK_THROWS_AS(clusters.get(99), std::runtime_error);

  // A later assigner (another run) counts the clusters it joins as reinforced.
  Assigner later(params, terms, index, clusters);
  later.assign("ns", {6, 500, "event six", &none, 0}, {{c, 1.0}});
  CHECK(later.counts().reinforced == std::set<std::int64_t>{5});
  CHECK(later.counts().clusters_created == 0);
}
