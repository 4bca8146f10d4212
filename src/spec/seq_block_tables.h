// The blocks of a proposer's own paged KV store (a draft model's, the MTP
// module's), lent to sequences as block tables, with per-sequence state.
//
// State is a struct with `std::vector<int32_t> blocks` (the block table),
// `uint64_t last_used` (the proposer's step it last drafted in) and `void
// reset()`, which drops what its blocks held. When the store is short of blocks,
// the tables of idle sequences (last_used before the current step) that drafted
// longest ago are released first.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "util/request_id.h"

namespace db {

template <class State>
class SeqBlockTables {
 public:
  SeqBlockTables(int32_t num_blocks, int32_t block_size) : num_blocks_(num_blocks), block_size_(block_size) {
    free_.reserve(static_cast<size_t>(num_blocks));
    for (int32_t b = num_blocks - 1; b >= 0; --b) free_.push_back(b);
  }

  // The sequence's state, made empty on first use.
  State& operator[](RequestId id) { return seqs_[id]; }
  // Releases the sequence's blocks and drops its state.
  void forget(RequestId id) {
    auto it = seqs_.find(id);
    if (it == seqs_.end()) return;
    release(it->second);
    seqs_.erase(it);
  }
  void release(State& s) {
    free_.insert(free_.end(), s.blocks.begin(), s.blocks.end());
    s.blocks.clear();
    s.reset();
  }
  // Grows s's table to cover `tokens` positions, releasing idle tables (last_used
  // < now) when short. False when it cannot; s is then unchanged.
  bool reserve(State& s, int32_t tokens, uint64_t now) {
    const auto need = static_cast<size_t>((tokens + block_size_ - 1) / block_size_);
    if (s.blocks.size() >= need) return true;
    const size_t missing = need - s.blocks.size();
    while (free_.size() < missing) {
      State* idle = nullptr;  // the idle sequence with blocks that drafted longest ago
      for (auto& [id, other] : seqs_)
        if (other.last_used < now && !other.blocks.empty() && (!idle || other.last_used < idle->last_used))
          idle = &other;
      if (!idle) return false;
      release(*idle);
    }
    for (size_t i = 0; i < missing; ++i) {
      s.blocks.push_back(free_.back());
      free_.pop_back();
    }
    return true;
  }
  // The store slot of position `pos` of s (inside its table).
  int64_t slot(const State& s, int32_t pos) const {
    return int64_t{s.blocks[static_cast<size_t>(pos / block_size_)]} * block_size_ + pos % block_size_;
  }
  int32_t block_size() const { return block_size_; }
  int64_t blocks_in_use() const { return num_blocks_ - static_cast<int64_t>(free_.size()); }

 private:
  int32_t num_blocks_, block_size_;
  std::vector<int32_t> free_;  // free block ids
  std::unordered_map<RequestId, State> seqs_;
};

}  // namespace db
