#include "tokenizer/added_tokens.h"

#include <algorithm>

#include "tokenizer/utf8.h"

namespace db {

namespace {

// Start of the character that ends just before `pos` (pos > lower bound assumed).
size_t previous_char_start(std::string_view s, size_t pos, size_t lower) {
  size_t p = pos - 1;
  while (p > lower && pos - p < 4 && (static_cast<uint8_t>(s[p]) & 0xC0) == 0x80) --p;
  return p;
}

bool white_space_at(std::string_view s, size_t pos, size_t& len) {
  uint32_t cp = 0;
  len = utf8::decode(s, pos, cp);
  return len != 0 && utf8::is_white_space(cp);
}

// Word characters for single_word: letters, digits and '_' (non-ASCII non-space counts as a letter).
bool word_char_at(std::string_view s, size_t pos) {
  uint32_t cp = 0;
  if (utf8::decode(s, pos, cp) == 0) return false;
  if (cp < 0x80) return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
  return !utf8::is_white_space(cp);
}

}  // namespace

void AddedTokenMatcher::Trie::insert(const std::string& s, int32_t token_index) {
  if (s.empty()) return;
  first_byte[static_cast<uint8_t>(s[0])] = true;
  int32_t node = 0;
  for (char c : s) {
    const auto b = static_cast<uint8_t>(c);
    auto& ch = nodes[node].children;
    auto it = std::lower_bound(ch.begin(), ch.end(), b, [](const auto& p, uint8_t v) { return p.first < v; });
    if (it != ch.end() && it->first == b) {
      node = it->second;
    } else {
      const auto next = static_cast<int32_t>(nodes.size());
      ch.insert(it, {b, next});
      nodes.emplace_back();
      node = next;
    }
  }
  if (nodes[node].token < 0) nodes[node].token = token_index;  // first definition wins
}

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedToken>& tokens) : tokens_(tokens) {
  for (size_t i = 0; i < tokens_.size(); ++i)
    (tokens_[i].normalized ? normalized_ : raw_).insert(tokens_[i].content, static_cast<int32_t>(i));
}

int32_t AddedTokenMatcher::longest_at(const Trie& trie, std::string_view text, size_t pos, bool parse_special,
                                      size_t& end) const {
  int32_t best = -1;
  int32_t node = 0;
  for (size_t p = pos; p < text.size(); ++p) {
    const auto b = static_cast<uint8_t>(text[p]);
    const auto& ch = trie.nodes[node].children;
    auto it = std::lower_bound(ch.begin(), ch.end(), b, [](const auto& q, uint8_t v) { return q.first < v; });
    if (it == ch.end() || it->first != b) break;
    node = it->second;
    const int32_t t = trie.nodes[node].token;
    if (t >= 0 && (parse_special || !tokens_[t].special)) {
      best = t;
      end = p + 1;
    }
  }
  return best;
}

bool AddedTokenMatcher::split_pass(const Trie& trie, std::string_view text, size_t begin, size_t end,
                                   bool parse_special, std::vector<TextSegment>& out, size_t& budget) const {
  const std::string_view view = text.substr(0, end);
  size_t text_start = begin;  // start of the pending plain text
  size_t pos = begin;
  while (pos < end) {
    if (!trie.first_byte[static_cast<uint8_t>(view[pos])]) {
      ++pos;
      continue;
    }
    size_t match_end = 0;
    const int32_t t = longest_at(trie, view, pos, parse_special, match_end);
    if (t < 0) {
      ++pos;
      continue;
    }
    const AddedToken& tok = tokens_[t];
    if (tok.single_word && ((pos > begin && word_char_at(view, previous_char_start(view, pos, begin))) ||
                            (match_end < end && word_char_at(view, match_end)))) {
      pos = match_end;  // a skipped match stays text, like the matcher it follows
      continue;
    }
    size_t match_begin = pos;
    size_t len = 0;
    if (tok.lstrip)
      while (match_begin > text_start) {
        const size_t prev = previous_char_start(view, match_begin, text_start);
        if (!white_space_at(view, prev, len) || prev + len != match_begin) break;
        match_begin = prev;
      }
    if (tok.rstrip)
      while (match_end < end && white_space_at(view, match_end, len)) match_end += len;
    if (budget == 0) return false;
    --budget;
    if (match_begin > text_start) out.push_back({text_start, match_begin, -1});
    out.push_back({match_begin, match_end, tok.id});
    pos = text_start = match_end;
  }
  if (end > text_start) out.push_back({text_start, end, -1});
  return true;
}

bool AddedTokenMatcher::split(std::string_view text, bool parse_special, std::vector<TextSegment>& out,
                              size_t max_tokens) const {
  if (tokens_.empty()) {
    if (!text.empty()) out.push_back({0, text.size(), -1});
    return true;
  }
  size_t budget = max_tokens;
  std::vector<TextSegment> first;
  const bool whole = split_pass(raw_, text, 0, text.size(), parse_special, first, budget);
  if (!whole || normalized_.nodes.size() == 1) {
    out.insert(out.end(), first.begin(), first.end());
    return whole;
  }
  for (const auto& seg : first) {
    if (seg.id >= 0) out.push_back(seg);
    else if (!split_pass(normalized_, text, seg.begin, seg.end, parse_special, out, budget)) return false;
  }
  return true;
}

}  // namespace db
