#include "loadtest/synthetic_text.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

namespace db::loadtest {

namespace {

constexpr std::array<std::string_view, 64> kWords = {
    "the", "of", "and", "to", "in", "is", "it", "that", "was", "for", "on", "are", "as", "with", "his", "they",
    "at", "be", "this", "have", "from", "or", "one", "had", "by", "word", "but", "not", "what", "all", "were", "we",
    "when", "your", "can", "said", "there", "use", "an", "each", "which", "she", "do", "how", "their", "if", "will",
    "up", "other", "about", "out", "many", "then", "them", "these", "so", "some", "her", "would", "make", "like",
    "him", "into", "time"};

void append_word(std::string& out, std::string_view word) {
  if (!out.empty()) out += ' ';
  out += word;
}

}  // namespace

std::string random_words(int32_t words, Rng& rng) {
  std::string out;
  out.reserve(static_cast<size_t>(words > 0 ? words : 0) * 5);
  for (int32_t i = 0; i < words; ++i) append_word(out, kWords[rng.below(kWords.size())]);
  return out;
}

std::string number_tag(uint64_t n) {
  std::string out;
  int32_t written = 0;
  do {
    append_word(out, kWords[n % kWords.size()]);
    n /= kWords.size();
    ++written;
  } while (n > 0 || written < kNumberTagWords);
  return out;
}

int32_t estimate_tokens(const std::string& text) {
  int64_t words = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  if (words == 0) return 0;
  return static_cast<int32_t>(std::max<int64_t>(1, std::llround(static_cast<double>(words) * 1.3)));
}

}  // namespace db::loadtest
