#include "recall/wordnet.hpp"

#include "common/ascii.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_set>
#include <utility>

namespace reflectd::recall {
namespace {

std::ifstream open_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("WordNet: cannot read " + path.string() +
                             " (install Debian's wordnet-base, or set recall.wordnet_dir to its "
                             "directory, or to \"\" to recall without it)");
  }
  return in;
}

[[noreturn]] void malformed(const std::filesystem::path& path, std::size_t line) {
  throw std::runtime_error("WordNet: " + path.string() + ":" + std::to_string(line) +
                           ": not a WordNet database line (wndb(5WN))");
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

template <typename T>
bool parse_number(std::string_view text, T& value, int base = 10) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  return error == std::errc() && end == text.data() + text.size();
}

bool one_ascii_word(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
}

// morphy(7WN) detachment rules: suffix -> ending.
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kNounRules{{{"s", ""},
                                                                                   {"ses", "s"},
                                                                                   {"xes", "x"},
                                                                                   {"zes", "z"},
                                                                                   {"ches", "ch"},
                                                                                   {"shes", "sh"},
                                                                                   {"men", "man"},
                                                                                   {"ies", "y"}}};
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kVerbRules{{{"s", ""},
                                                                                   {"ies", "y"},
                                                                                   {"es", "e"},
                                                                                   {"es", ""},
                                                                                   {"ed", "e"},
                                                                                   {"ed", ""},
                                                                                   {"ing", "e"},
                                                                                   {"ing", ""}}};

constexpr std::uint32_t kNoRank = 0xffffffff;

}  // namespace

std::unordered_map<std::uint64_t, std::uint32_t> WordNet::read_data(
    const std::filesystem::path& data_path, char pos_letter, PartOfSpeech& pos, WordIds& word_ids) {
  auto word_id = [&](const std::string& w) {
    auto [it, inserted] = word_ids.try_emplace(w, static_cast<std::uint32_t>(words_.size()));
    if (inserted) words_.push_back(w);
    return it->second;
  };
  // data.pos: synset_offset lex_filenum ss_type w_cnt word lex_id [...] p_cnt
  // [ptr_symbol synset_offset pos source/target] [...] ... | gloss
  std::ifstream data = open_file(data_path);
  std::unordered_map<std::uint64_t, std::uint32_t> by_offset;
  std::vector<std::vector<std::uint64_t>> hyponym_offsets;
  std::string line;
  std::size_t number = 0;
  while (std::getline(data, line)) {
    ++number;
    if (line.starts_with("  ")) continue;  // the licence header
    const std::string_view body = std::string_view(line).substr(0, line.find(" | "));
    const std::vector<std::string_view> f = fields(body);
    std::uint64_t offset = 0;
    std::size_t word_count = 0;
    if (f.size() < 4 || !parse_number(f[0], offset) || !parse_number(f[3], word_count, 16)) {
      malformed(data_path, number);
    }
    std::size_t i = 4 + 2 * word_count;
    std::size_t pointer_count = 0;
    if (f.size() <= i || !parse_number(f[i], pointer_count) ||
        f.size() < i + 1 + 4 * pointer_count) {
      malformed(data_path, number);
    }
    Synset synset;
    for (std::size_t w = 0; w < word_count; ++w) {
      const std::string lemma = ascii_lower(f[4 + 2 * w]);
      if (one_ascii_word(lemma)) synset.words.push_back({word_id(lemma), kNoRank});
    }
    std::vector<std::uint64_t> hyponyms;
    for (std::size_t p = 0; p < pointer_count; ++p) {
      const std::string_view symbol = f[i + 1 + 4 * p];
      const std::string_view target_pos = f[i + 3 + 4 * p];
      std::uint64_t target = 0;
      if ((symbol == "~" || symbol == "~i") && target_pos.size() == 1 &&
          target_pos[0] == pos_letter && parse_number(f[i + 2 + 4 * p], target)) {
        hyponyms.push_back(target);
      }
    }
    by_offset.emplace(offset, static_cast<std::uint32_t>(pos.synsets.size()));
    pos.synsets.push_back(std::move(synset));
    hyponym_offsets.push_back(std::move(hyponyms));
  }
  for (std::size_t s = 0; s < pos.synsets.size(); ++s) {
    for (const std::uint64_t offset : hyponym_offsets[s]) {
      const auto it = by_offset.find(offset);
      if (it != by_offset.end()) pos.synsets[s].hyponyms.push_back(it->second);
    }
  }

  return by_offset;
}

void WordNet::read_index(const std::filesystem::path& index_path,
                         const std::unordered_map<std::uint64_t, std::uint32_t>& by_offset,
                         const WordIds& word_ids, PartOfSpeech& pos) {
  // index.pos: lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt
  // synset_offset [synset_offset...]
  std::ifstream index = open_file(index_path);
  std::string line;
  std::size_t number = 0;
  while (std::getline(index, line)) {
    ++number;
    if (line.starts_with("  ")) continue;
    const std::vector<std::string_view> f = fields(line);
    std::size_t synset_count = 0;
    std::size_t pointer_count = 0;
    if (f.size() < 4 || !parse_number(f[2], synset_count) || !parse_number(f[3], pointer_count) ||
        f.size() < 6 + pointer_count + synset_count) {
      malformed(index_path, number);
    }
    const std::string lemma = ascii_lower(f[0]);
    std::vector<std::uint32_t>& senses = pos.senses[lemma];
    const auto id = word_ids.find(lemma);
    for (std::size_t s = 0; s < synset_count; ++s) {
      std::uint64_t offset = 0;
      if (!parse_number(f[6 + pointer_count + s], offset)) malformed(index_path, number);
      const auto it = by_offset.find(offset);
      if (it == by_offset.end()) continue;
      if (id != word_ids.end()) {
        for (Member& m : pos.synsets[it->second].words) {
          if (m.word == id->second) m.rank = static_cast<std::uint32_t>(senses.size());
        }
      }
      senses.push_back(it->second);
    }
  }
}

void WordNet::read_exceptions(const std::filesystem::path& path, PartOfSpeech& pos) {
  // pos.exc: inflected_form base_form [base_form...]
  std::ifstream exceptions = open_file(path);
  std::string line;
  while (std::getline(exceptions, line)) {
    const std::vector<std::string_view> f = fields(line);
    if (f.size() < 2) continue;
    auto& bases = pos.exceptions[ascii_lower(f[0])];
    for (std::size_t b = 1; b < f.size(); ++b) bases.push_back(ascii_lower(f[b]));
  }
}

WordNet WordNet::load(const std::filesystem::path& dir) {
  WordNet wn;
  WordIds word_ids;
  for (const bool noun : {true, false}) {
    PartOfSpeech& pos = noun ? wn.noun_ : wn.verb_;
    const std::string name = noun ? "noun" : "verb";
    const auto by_offset = wn.read_data(dir / ("data." + name), noun ? 'n' : 'v', pos, word_ids);
    read_index(dir / ("index." + name), by_offset, word_ids, pos);
    read_exceptions(dir / (name + ".exc"), pos);
  }

  // cntlist.rev: sense_key sense_number tag_cnt, sense_key = lemma%lex_sense
  wn.tag_counts_.assign(wn.words_.size(), 0);
  const std::filesystem::path counts_path = dir / "cntlist.rev";
  std::ifstream counts = open_file(counts_path);
  std::string line;
  std::size_t number = 0;
  while (std::getline(counts, line)) {
    ++number;
    const std::vector<std::string_view> f = fields(line);
    std::int64_t count = 0;
    const std::size_t percent = f.empty() ? std::string_view::npos : f[0].find('%');
    if (f.size() != 3 || percent == std::string_view::npos || !parse_number(f[2], count)) {
      malformed(counts_path, number);
    }
    if (const auto id = word_ids.find(ascii_lower(f[0].substr(0, percent))); id != word_ids.end()) {
      wn.tag_counts_[id->second] += count;
    }
  }
  if (wn.noun_.synsets.empty() || wn.verb_.synsets.empty()) {
    throw std::runtime_error("WordNet: " + dir.string() + " holds no noun or no verb synsets");
  }
  return wn;
}

std::size_t WordNet::synset_count() const { return noun_.synsets.size() + verb_.synsets.size(); }

std::vector<std::string> WordNet::lemmas(std::string_view word, const PartOfSpeech& pos,
                                         bool noun) const {
  std::vector<std::string> out;
  auto add = [&](std::string lemma) {
    if (pos.senses.contains(lemma) && std::find(out.begin(), out.end(), lemma) == out.end()) {
      out.push_back(std::move(lemma));
    }
  };
  const std::string w(word);
  if (const auto it = pos.exceptions.find(w); it != pos.exceptions.end()) {
    for (const std::string& base : it->second) add(base);
  }
  add(w);
  for (const auto& [suffix, ending] : noun ? kNounRules : kVerbRules) {
    if (w.size() > suffix.size() && w.ends_with(suffix)) {
      add(w.substr(0, w.size() - suffix.size()) + std::string(ending));
    }
  }
  return out;
}

std::vector<RelatedWord> WordNet::hyponyms(std::string_view word,
                                           const HyponymLimits& limits) const {
  std::vector<RelatedWord> out;
  std::unordered_set<std::uint32_t> seen_words;
  // The result is ordered by depth first, so the walk stops after the level at which both
  // parts of speech together have found max_words words: no deeper word could enter.
  struct Walk {
    const PartOfSpeech* pos;
    std::vector<std::uint32_t> level;
    std::unordered_set<std::uint32_t> seen;
  };
  std::array<Walk, 2> walks{Walk{&noun_, {}, {}}, Walk{&verb_, {}, {}}};
  std::unordered_set<std::string> own;  // the word and its lemmas are not related words
  own.emplace(word);
  for (Walk& walk : walks) {
    for (const std::string& lemma : lemmas(word, *walk.pos, walk.pos == &noun_)) {
      own.insert(lemma);
      const std::vector<std::uint32_t>& senses = walk.pos->senses.at(lemma);
      for (std::size_t s = 0; s < std::min(limits.max_senses, senses.size()); ++s) {
        if (walk.seen.insert(senses[s]).second) walk.level.push_back(senses[s]);
      }
    }
  }
  std::size_t visited = 0;
  for (std::size_t depth = 0; depth <= limits.max_depth; ++depth) {
    for (Walk& walk : walks) {
      for (const std::uint32_t synset : walk.level) {
        for (const Member& m : walk.pos->synsets[synset].words) {
          if (m.rank >= limits.max_senses || tag_counts_[m.word] <= 0 ||
              own.contains(words_[m.word]) || !seen_words.insert(m.word).second) {
            continue;
          }
          out.push_back({words_[m.word], depth, tag_counts_[m.word]});
        }
      }
    }
    if (out.size() >= limits.max_words || depth == limits.max_depth) break;
    for (Walk& walk : walks) {
      std::vector<std::uint32_t> next;
      for (const std::uint32_t synset : walk.level) {
        for (const std::uint32_t h : walk.pos->synsets[synset].hyponyms) {
          if (visited >= limits.max_synsets) break;
          if (walk.seen.insert(h).second) {
            next.push_back(h);
            ++visited;
          }
        }
      }
      walk.level = std::move(next);
    }
  }
  std::sort(out.begin(), out.end(), [](const RelatedWord& a, const RelatedWord& b) {
    if (a.depth != b.depth) return a.depth < b.depth;
    if (a.tag_count != b.tag_count) return a.tag_count > b.tag_count;
    return a.word < b.word;
  });
  if (out.size() > limits.max_words) out.resize(limits.max_words);
  return out;
}

constexpr std::array<std::string_view, 7> kFiles{
    "data.noun", "data.verb", "index.noun", "index.verb", "noun.exc", "verb.exc", "cntlist.rev"};

WordNetLoader::WordNetLoader(std::filesystem::path dir) : dir_(std::move(dir)) {
  for (const std::string_view file : kFiles) open_file(dir_ / file);
}

const WordNet* WordNetLoader::get() const {
  std::call_once(once_, [this] {
    const auto start = std::chrono::steady_clock::now();
    try {
      wordnet_ = std::make_unique<const WordNet>(WordNet::load(dir_));
      spdlog::info("recall: WordNet loaded from {} ({} synsets, {:.2f} s)", dir_.string(),
                   wordnet_->synset_count(),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    } catch (const std::exception& e) {
      error_ = e.what();
      spdlog::error("recall: {}; recalling without related words", error_);
    }
  });
  return wordnet_.get();
}

std::string WordNetLoader::error() const {
  // error_ is written once inside call_once; read it only after that has run.
  return wordnet_ ? std::string() : error_;
}

}  // namespace reflectd::recall
