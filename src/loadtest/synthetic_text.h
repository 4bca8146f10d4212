// Prompt text of roughly a given number of tokens, built from a fixed list of
// common short lowercase English words joined by single spaces. Each such word
// (with its leading space) is one token in the usual BPE vocabularies, so N words
// approximate N tokens; a chat template and BOS add a few tokens on top that the
// target does not count.
#pragma once
#include <cstdint>
#include <string>

#include "util/random.h"

namespace db::loadtest {

// `words` words drawn uniformly from the word list with `rng`.
std::string random_words(int32_t words, Rng& rng);

// Words spelling `n` in base 64 (the word-list size), least significant digit first,
// padded to at least kNumberTagWords words: texts starting with the tags of two
// numbers below 64^kNumberTagWords differ within their first kNumberTagWords words.
constexpr int32_t kNumberTagWords = 3;
std::string number_tag(uint64_t n);

// The number of tokens `text` is estimated to have: its whitespace-separated words
// x 1.3, rounded, at least 1 for non-empty text (the usual rule of thumb for English).
int32_t estimate_tokens(const std::string& text);

}  // namespace db::loadtest
