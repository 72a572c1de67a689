#pragma once
// WordNet 3.0 (Princeton University; Debian's wordnet-base, /usr/share/wordnet), read from its
// database files as wndb(5WN) documents them: the noun and verb synsets with their hyponym
// pointers, the lemma index (senses ordered by frequency), the morphology exception lists
// and the sense tag counts (cntlist.rev). recall uses it for one signal: the words that name
// a kind of a question's word ("activities" -> pottery, camping, swimming; "destress" ->
// relax), searched beside the question's own terms (docs/RECALL.md, stage 3b).
//
// Why not libwordnet (Debian's wordnet-dev): its search functions keep their state in
// globals (open files, a shared result buffer) and are not thread-safe, and its runtime is
// only in the -dev package. The files are a documented line format, read once at start.
//
// Thread-safety: a loaded WordNet is immutable; any number of threads may call its const
// members at once.
// Errors: load() throws std::runtime_error naming the file that is missing or malformed.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace reflectd::recall {

/// How far hyponyms() looks below a word.
struct HyponymLimits {
  /// Senses of the word (and of each related word) considered; WordNet lists a lemma's
  /// senses most frequent first, and rare senses ("pottery" as a workshop) mislead.
  std::size_t max_senses = 2;
  std::size_t max_depth = 3;       ///< Hyponym levels below the word's senses.
  std::size_t max_synsets = 4096;  ///< Synsets visited per word (bounds "entity", "thing").
  std::size_t max_words = 64;      ///< Words returned, nearest and most frequent first.
};

/// A word that names the same thing as, or a kind of, the word asked about.
struct RelatedWord {
  std::string word;            ///< Lower-case lemma of one ASCII word ("pottery").
  std::size_t depth = 0;       ///< 0: a synonym; n: n hyponym levels below.
  std::int64_t tag_count = 0;  ///< SemCor tag count of the lemma over its senses (> 0).
};

class WordNet {
 public:
  /// Reads index.noun, index.verb, data.noun, data.verb, noun.exc, verb.exc and cntlist.rev
  /// from `dir` (about 0.3 s and 40 MB for WordNet 3.0). Throws std::runtime_error naming
  /// the file when one is missing, unreadable or not in the wndb format.
  static WordNet load(const std::filesystem::path& dir);

  /// The words whose first `max_senses` noun or verb senses are a sense of `word` (one of its
  /// first `max_senses`, after morphy's exceptions and detachment rules: "activities" ->
  /// activity) or lie at most `max_depth` hyponym levels below one. Only single ASCII words
  /// with a tag count above 0; by depth, then tag count (descending), then the word; at most
  /// `max_words`. `word` is lower-case ASCII; neither it nor its lemmas are in the result.
  std::vector<RelatedWord> hyponyms(std::string_view word, const HyponymLimits& limits) const;

  /// Synsets loaded (nouns and verbs).
  std::size_t synset_count() const;

 private:
  struct Member {
    std::uint32_t word = 0;  // into words_
    std::uint32_t rank = 0;  // this synset's place among the word's senses (0: most frequent)
  };
  struct Synset {
    std::vector<Member> words;            // single ASCII words only
    std::vector<std::uint32_t> hyponyms;  // into the same part of speech's synsets
  };
  struct PartOfSpeech {
    std::vector<Synset> synsets;
    // lemma -> its synsets, most frequent sense first (index.pos)
    std::unordered_map<std::string, std::vector<std::uint32_t>> senses;
    // inflected form -> lemmas (pos.exc)
    std::unordered_map<std::string, std::vector<std::string>> exceptions;
  };

  // morphy(7WN): the exception list, the word itself, then the detachment rules.
  std::vector<std::string> lemmas(std::string_view word, const PartOfSpeech& pos, bool noun) const;

  PartOfSpeech noun_, verb_;
  using WordIds = std::unordered_map<std::string, std::uint32_t>;  // lemma -> into words_
  // data.<pos>: its synsets into `pos` (their words interned in words_ through `word_ids`);
  // returns each synset's place by its offset. Throws std::runtime_error naming the file and
  // line when a line is malformed or the file cannot be read.
  std::unordered_map<std::uint64_t, std::uint32_t> read_data(const std::filesystem::path& path,
                                                             char pos_letter, PartOfSpeech& pos,
                                                             WordIds& word_ids);
  // index.<pos>: each lemma's senses, most frequent first, and each member's rank among them.
  static void read_index(const std::filesystem::path& path,
                         const std::unordered_map<std::uint64_t, std::uint32_t>& by_offset,
                         const WordIds& word_ids, PartOfSpeech& pos);
  // <pos>.exc: the irregular inflections.
  static void read_exceptions(const std::filesystem::path& path, PartOfSpeech& pos);
  std::vector<std::string> words_;
  std::vector<std::int64_t> tag_counts_;  // by word id
};

/// WordNet loaded on first use: the load takes about half a second and 40 MB, which a
/// daemon that is never asked a question need not pay at every start.
///
/// Thread-safety: get() may be called from any thread (std::call_once).
class WordNetLoader {
 public:
  /// Checks that the seven files of `dir` can be opened; throws std::runtime_error naming
  /// the first that cannot (at startup, so a missing package stops the start).
  explicit WordNetLoader(std::filesystem::path dir);

  /// The database, loaded by the first call; null when that load failed, whose error is
  /// logged once and kept in error(). recall then goes on without related words.
  const WordNet* get() const;

  /// The load's error; empty before the first get() and after a load that succeeded.
  std::string error() const;

 private:
  std::filesystem::path dir_;
  mutable std::once_flag once_;
  mutable std::unique_ptr<const WordNet> wordnet_;
  mutable std::string error_;
};

}  // namespace reflectd::recall
