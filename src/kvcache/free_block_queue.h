// The free blocks in eviction order, as an intrusive doubly linked list threaded
// through KVBlock::prev_free / next_free:
//
//   head <-> b_lru <-> ... <-> b_mru <-> tail      popleft() takes b_lru (evicted next);
//                                                  append() adds after b_mru;
//                                                  remove(b) unlinks b from anywhere.
//
// Every operation is O(1) per block. The queue never owns or allocates blocks.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "kvcache/kv_block.h"

namespace db {

class FreeBlockQueue {
 public:
  // Queues all `blocks` in the given order (for a fresh pool: ids ascending).
  explicit FreeBlockQueue(std::span<KVBlock> blocks);
  FreeBlockQueue(const FreeBlockQueue&) = delete;
  FreeBlockQueue& operator=(const FreeBlockQueue&) = delete;

  int32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Whether `block` is queued.
  static bool contains(const KVBlock& block) { return block.next_free != nullptr; }

  // Unlinks and returns the least recently freed block; the queue must not be empty.
  KVBlock* popleft();
  // popleft() n times; n <= size().
  std::vector<KVBlock*> popleft_n(int32_t n);
  // Unlinks and returns the n blocks queued right after `anchor` (a queued block),
  // in queue order; there must be n of them.
  std::vector<KVBlock*> pop_n_after(const KVBlock* anchor, int32_t n);
  // Unlinks a queued block from anywhere in the queue.
  void remove(KVBlock* block);
  // Queues an unqueued block as the most recently freed.
  void append(KVBlock* block);
  // append() each block in order.
  void append_n(std::span<KVBlock* const> blocks);

  // Block ids from next-to-evict to last (O(size), for diagnostics and tests).
  std::vector<int32_t> ids() const;

 private:
  KVBlock head_;  // sentinel: head_.next_free is the LRU block
  KVBlock tail_;  // sentinel: tail_.prev_free is the MRU block
  int32_t size_ = 0;
};

}  // namespace db
