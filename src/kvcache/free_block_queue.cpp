#include "kvcache/free_block_queue.h"

#include <algorithm>

#include "util/error.h"

namespace db {

FreeBlockQueue::FreeBlockQueue(std::span<KVBlock> blocks) {
  head_.id = tail_.id = -1;
  head_.next_free = &tail_;
  tail_.prev_free = &head_;
  for (KVBlock& b : blocks) append(&b);
}

KVBlock* FreeBlockQueue::popleft() {
  DB_CHECK(size_ > 0, "pop from an empty free block queue");
  KVBlock* block = head_.next_free;
  remove(block);
  return block;
}

std::vector<KVBlock*> FreeBlockQueue::popleft_n(int32_t n) {
  DB_CHECK(n >= 0 && n <= size_,
           "cannot pop " + std::to_string(n) + " blocks from a free queue of " + std::to_string(size_));
  std::vector<KVBlock*> out;
  out.reserve(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) out.push_back(popleft());
  return out;
}

std::vector<KVBlock*> FreeBlockQueue::pop_n_after(const KVBlock* anchor, int32_t n) {
  DB_CHECK(contains(*anchor), "block " + std::to_string(anchor->id) + " is not in the free queue");
  std::vector<KVBlock*> out;
  out.reserve(static_cast<size_t>(std::max(n, 0)));
  for (int32_t i = 0; i < n; ++i) {
    KVBlock* b = anchor->next_free;
    DB_CHECK(b != &tail_, "fewer than " + std::to_string(n) + " blocks queued after block " + std::to_string(anchor->id));
    remove(b);
    out.push_back(b);
  }
  return out;
}

void FreeBlockQueue::remove(KVBlock* block) {
  DB_CHECK(contains(*block), "block " + std::to_string(block->id) + " is not in the free queue");
  block->prev_free->next_free = block->next_free;
  block->next_free->prev_free = block->prev_free;
  block->prev_free = block->next_free = nullptr;
  --size_;
}

void FreeBlockQueue::append(KVBlock* block) {
  DB_CHECK(!contains(*block), "block " + std::to_string(block->id) + " is already in the free queue");
  KVBlock* last = tail_.prev_free;
  last->next_free = block;
  block->prev_free = last;
  block->next_free = &tail_;
  tail_.prev_free = block;
  ++size_;
}

void FreeBlockQueue::append_n(std::span<KVBlock* const> blocks) {
  for (KVBlock* b : blocks) append(b);
}

std::vector<int32_t> FreeBlockQueue::ids() const {
  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(size_));
  for (const KVBlock* b = head_.next_free; b != &tail_; b = b->next_free) out.push_back(b->id);
  return out;
}

}  // namespace db
