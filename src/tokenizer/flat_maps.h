// Open-addressing hash maps for the BPE tables: one probe sequence over a flat
// array instead of a node per entry, which keeps 100k+ entry vocabularies fast to
// build and to query.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace db {

// Token text -> id over a token list owned by the index. Empty texts are not indexed;
// for duplicate texts the lowest id wins.
class TokenIndex {
 public:
  void build(std::vector<std::string> tokens) {
    tokens_ = std::move(tokens);
    size_t cap = 16;
    while (cap < tokens_.size() * 2) cap <<= 1;
    slots_.assign(cap, -1);
    mask_ = cap - 1;
    for (size_t id = 0; id < tokens_.size(); ++id) {
      if (tokens_[id].empty()) continue;
      size_t i = hash(tokens_[id]) & mask_;
      while (slots_[i] >= 0 && tokens_[slots_[i]] != tokens_[id]) i = (i + 1) & mask_;
      if (slots_[i] < 0) slots_[i] = static_cast<int32_t>(id);
    }
  }
  int32_t find(std::string_view text) const {
    if (slots_.empty()) return -1;
    for (size_t i = hash(text) & mask_;; i = (i + 1) & mask_) {
      const int32_t id = slots_[i];
      if (id < 0) return -1;
      if (tokens_[id] == text) return id;
    }
  }

 private:
  static size_t hash(std::string_view s) { return std::hash<std::string_view>{}(s); }
  std::vector<std::string> tokens_;
  std::vector<int32_t> slots_;  // token id, or -1 for an empty slot
  size_t mask_ = 0;
};

// (left id, right id) -> merge rank and merged id. The first insertion of a pair wins.
class MergeTable {
 public:
  struct Merge {
    int32_t rank;
    int32_t result;  // id of the merged token
  };
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    slots_.assign(cap, Slot{kEmpty, {0, 0}});
    mask_ = cap - 1;
  }
  void insert(int32_t a, int32_t b, Merge m) {
    const uint64_t k = key(a, b);
    size_t i = hash(k) & mask_;
    while (slots_[i].key != kEmpty && slots_[i].key != k) i = (i + 1) & mask_;
    if (slots_[i].key == kEmpty) {
      slots_[i] = Slot{k, m};
      ++size_;
    }
  }
  const Merge* find(int32_t a, int32_t b) const {
    if (slots_.empty()) return nullptr;
    const uint64_t k = key(a, b);
    for (size_t i = hash(k) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].key == k) return &slots_[i].merge;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }
  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  struct Slot {
    uint64_t key;
    Merge merge;
  };
  static uint64_t key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  static size_t hash(uint64_t k) { return static_cast<size_t>((k * 0x9E3779B97F4A7C15ull) >> 17); }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace db
