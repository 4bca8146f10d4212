#include "tokenizer/bpe.h"

#include <algorithm>

#include "tokenizer/byte_level.h"

namespace db {

namespace {

struct Symbol {
  int32_t id;    // current token; -1 once merged into its left neighbour
  int32_t prev;  // index of the left neighbour or -1
  int32_t next;  // index of the right neighbour or -1
};

struct Candidate {
  int32_t rank;
  int32_t pos;       // index of the left symbol
  int32_t left_id;   // ids the pair had when queued (stale entries are skipped)
  int32_t right_id;
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

BpeModel::BpeModel(std::vector<std::string> tokens,
                   const std::vector<std::pair<std::string, std::string>>& merges, bool ignore_merges,
                   int32_t unk_id)
    : ignore_merges_(ignore_merges), unk_id_(unk_id) {
  ids_.build(std::move(tokens));
  for (int b = 0; b < 256; ++b) byte_ids_[b] = find(byte_level::char_of_byte(static_cast<uint8_t>(b)));
  merges_.reserve(merges.size());
  int32_t rank = 0;
  std::string joined;
  for (const auto& [left, right] : merges) {
    joined.assign(left).append(right);
    const int32_t a = find(left), b = find(right), r = find(joined);
    if (a >= 0 && b >= 0 && r >= 0) merges_.insert(a, b, MergeTable::Merge{rank, r});
    ++rank;
  }
}

void BpeModel::encode_piece(std::string_view bytes, std::vector<int32_t>& out) const {
  if (bytes.empty()) return;
  if (ignore_merges_) {
    const int32_t whole = find(byte_level::encode(bytes));
    if (whole >= 0) {
      out.push_back(whole);
      return;
    }
  }
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Candidate> heap;
  symbols.clear();
  heap.clear();
  for (char c : bytes) {
    int32_t id = byte_ids_[static_cast<uint8_t>(c)];
    if (id < 0) id = unk_id_;
    if (id < 0) continue;
    const auto idx = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, idx - 1, -1});
    if (idx > 0) symbols[idx - 1].next = idx;
  }
  if (symbols.empty()) return;
  if (symbols.size() == 1) {
    out.push_back(symbols[0].id);
    return;
  }
  const auto push = [&](int32_t pos) {
    const int32_t next = symbols[pos].next;
    if (next < 0) return;
    if (const MergeTable::Merge* m = merges_.find(symbols[pos].id, symbols[next].id)) {
      heap.push_back({m->rank, pos, symbols[pos].id, symbols[next].id});
      std::push_heap(heap.begin(), heap.end(), std::greater<>{});
    }
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) push(i);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
    const Candidate c = heap.back();
    heap.pop_back();
    Symbol& left = symbols[c.pos];
    if (left.id != c.left_id || left.next < 0 || symbols[left.next].id != c.right_id) continue;
    Symbol& right = symbols[left.next];
    left.id = merges_.find(c.left_id, c.right_id)->result;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = c.pos;
    right.id = -1;
    if (left.prev >= 0) push(left.prev);
    push(c.pos);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

size_t BpeModel::kept_bytes(std::string_view bytes) const {
  if (unk_id_ >= 0) return bytes.size();
  size_t kept = 0;
  for (char c : bytes) kept += byte_ids_[static_cast<uint8_t>(c)] >= 0;
  return kept;
}

}  // namespace db
