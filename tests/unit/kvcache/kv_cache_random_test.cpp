// Thousands of random admit / step / fork / free operations against a model of
// the KV contents: every block row remembers a fingerprint of the whole prefix
// whose KV was written there (as a real KV row depends on every earlier token),
// so a wrong prefix hit, a missed copy-on-write or a block shared by mistake
// shows up as a request reading a row that does not hold its own prefix.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "kv_test_util.h"
#include "kvcache/kv_cache_manager.h"

namespace db {
namespace {

constexpr int32_t kRandomBs = 4;
constexpr int32_t kNumBlocks = 41;

// A fingerprint of tokens[0..p] from the one of tokens[0..p-1] (splitmix64 finalizer).
uint64_t extend_fingerprint(uint64_t prev, int32_t token) {
  uint64_t z = prev ^ (uint64_t(uint32_t(token)) + 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (z ^ (z >> 31)) | 1;  // never 0, the "nothing written" mark
}

struct Seq {
  std::vector<int32_t> tokens;  // known tokens; the last one is not computed yet
  std::vector<uint64_t> fps;    // fps[p]: fingerprint of tokens[0..p] (and the extra keys)
  int32_t computed = 0;         // tokens whose KV are written

  void push(int32_t token) {
    fps.push_back(extend_fingerprint(fps.empty() ? salt : fps.back(), token));
    tokens.push_back(token);
  }
  uint64_t salt = 0;  // stands for the extra keys
};

class RandomKVWorkload {
 public:
  RandomKVWorkload(uint32_t seed, bool caching, BlockHashFn hash_fn)
      : rng_(seed), m_(kRandomBs, kNumBlocks, caching, hash_fn), rows_(kNumBlocks, std::vector<uint64_t>(kRandomBs, 0)) {}

  void run(int ops) {
    for (int i = 0; i < ops; ++i) {
      const uint32_t op = rng_() % 10;
      if (seqs_.empty())
        admit();
      else if (m_.usage() > 0.9 && rng_() % 3 == 0)
        free(pick());  // keep most allocations fitting
      else if (op < 3)
        admit();
      else if (op < 7)
        step(pick());
      else if (op < 8)
        fork(pick());
      else
        free(pick());
      if (seqs_.empty() && rng_() % 4 == 0) {
        ASSERT_TRUE(m_.reset_prefix_cache());
      }
      check_invariants();
      if (::testing::Test::HasFatalFailure()) return;
    }
  }

  uint64_t hit_tokens() const { return m_.prefix_cache_stats().hit_tokens; }
  int copies() const { return copies_; }
  int failed() const { return failed_; }
  int succeeded() const { return succeeded_; }
  uint64_t evicted() const { return m_.prefix_cache_stats().evicted_blocks; }

 private:
  RequestId pick() {
    auto it = seqs_.begin();
    std::advance(it, rng_() % seqs_.size());
    return it->first;
  }

  // Prompts draw from a few shared prefixes so that hits are frequent.
  void random_prompt(Seq& s) {
    const int32_t prefix = static_cast<int32_t>(rng_() % 4);
    const int32_t prefix_len = static_cast<int32_t>(rng_() % 14);
    for (int32_t i = 0; i < prefix_len; ++i) s.push(prefix * 1000 + i);
    const int32_t tail = 1 + static_cast<int32_t>(rng_() % 6);
    for (int32_t i = 0; i < tail; ++i) s.push(static_cast<int32_t>(rng_() % 3));
  }

  void admit() {
    const RequestId id = next_id_++;
    Seq s;
    const BlockExtraKeys extra{rng_() % 5 == 0 ? "salt" : ""};
    s.salt = extra.bytes.empty() ? 0 : 1;
    random_prompt(s);
    const ComputedBlocks hit = m_.get_computed_blocks(id, s.tokens, extra);
    ASSERT_LT(hit.num_computed_tokens, int32_t(s.tokens.size()));
    SlotRequest r;
    r.tokens = s.tokens;
    r.num_new_tokens = 1 + static_cast<int32_t>(rng_() % (s.tokens.size() - hit.num_computed_tokens));
    r.prefix_hit = &hit;
    r.extra_keys = &extra;
    s.computed = hit.num_computed_tokens;
    if (allocate(id, s, r)) {
      // The adopted hit must hold exactly this prompt's KV.
      for (int32_t p = 0; p < hit.num_computed_tokens; ++p) ASSERT_EQ(row(id, p), s.fps[size_t(p)]);
    }
  }

  void step(RequestId id) {
    Seq& s = seqs_[id];
    SlotRequest r;
    r.tokens = s.tokens;
    r.num_computed_tokens = s.computed;
    r.num_new_tokens = 1 + static_cast<int32_t>(rng_() % (s.tokens.size() - s.computed));
    r.num_lookahead_tokens = static_cast<int32_t>(rng_() % 3);
    allocate(id, s, r);
  }

  // Runs allocate_slots and, on success, "computes" the step: copies, then KV writes.
  bool allocate(RequestId id, Seq s, const SlotRequest& r) {
    const auto queue_before = m_.pool().free_queue_ids();
    const auto table_before = m_.has_request(id) ? m_.block_table(id) : std::vector<int32_t>{};
    const auto res = m_.allocate_slots(id, r);
    if (!res) {
      ++failed_;
      EXPECT_EQ(m_.pool().free_queue_ids(), queue_before);
      EXPECT_EQ(m_.has_request(id) ? m_.block_table(id) : std::vector<int32_t>{}, table_before);
      return false;
    }
    for (int32_t b : res->new_blocks) std::fill(rows_[size_t(b)].begin(), rows_[size_t(b)].end(), 0);
    for (const BlockCopy& c : res->copies) rows_[size_t(c.dst)] = rows_[size_t(c.src)];
    copies_ += static_cast<int>(res->copies.size());
    ++succeeded_;
    const auto& table = m_.block_table(id);
    const int64_t slots = int64_t(table.size()) * kRandomBs;
    EXPECT_GE(slots, int64_t(s.computed) + r.num_new_tokens + r.num_lookahead_tokens);
    for (int32_t p = s.computed; p < s.computed + r.num_new_tokens; ++p)
      rows_[size_t(table[size_t(p / kRandomBs)])][size_t(p % kRandomBs)] = s.fps[size_t(p)];
    s.computed += r.num_new_tokens;
    if (s.computed == int32_t(s.tokens.size())) s.push(static_cast<int32_t>(rng_() % 3));  // sampled
    seqs_[id] = s;
    return true;
  }

  void fork(RequestId parent) {
    const RequestId child = next_id_++;
    m_.fork(parent, child);
    seqs_[child] = seqs_[parent];
  }

  void free(RequestId id) {
    EXPECT_TRUE(m_.free(id));
    seqs_.erase(id);
  }

  uint64_t row(RequestId id, int32_t pos) const {
    const auto& table = m_.block_table(id);
    return rows_[size_t(table[size_t(pos / kRandomBs)])][size_t(pos % kRandomBs)];
  }

  void check_invariants() {
    std::vector<int32_t> holders(kNumBlocks, 0);
    for (const auto& [id, s] : seqs_) {
      const auto& table = m_.block_table(id);
      for (int32_t b : table) {
        ASSERT_NE(b, kNullBlockId);
        ++holders[size_t(b)];
      }
      for (int32_t p = 0; p < s.computed; ++p)
        ASSERT_EQ(row(id, p), s.fps[size_t(p)]) << "request " << id << " position " << p;
    }
    const auto queue = m_.pool().free_queue_ids();
    std::vector<int32_t> in_queue(kNumBlocks, 0);
    for (int32_t b : queue) ASSERT_EQ(++in_queue[size_t(b)], 1) << "block " << b << " queued twice";
    int32_t free_count = 0;
    for (int32_t b = 1; b < kNumBlocks; ++b) {
      const KVBlock& blk = m_.pool().block(b);
      ASSERT_GE(blk.ref_cnt, 0);
      ASSERT_EQ(blk.ref_cnt, holders[size_t(b)]) << "block " << b;
      ASSERT_EQ(in_queue[size_t(b)] == 1, blk.ref_cnt == 0) << "block " << b << " free-queued xor referenced";
      free_count += blk.ref_cnt == 0;
    }
    ASSERT_EQ(in_queue[kNullBlockId], 0);
    ASSERT_EQ(m_.num_free_blocks(), free_count);
    ASSERT_EQ(int32_t(queue.size()), free_count);
    ASSERT_DOUBLE_EQ(m_.usage(), 1.0 - double(free_count) / (kNumBlocks - 1));
  }

  std::mt19937 rng_;
  KVCacheManager m_;
  std::vector<std::vector<uint64_t>>
      rows_;  // per block, per row: fingerprint of the prefix whose KV is there (0: none)
  std::map<RequestId, Seq> seqs_;
  RequestId next_id_ = 1;
  int copies_ = 0;
  int failed_ = 0;
  int succeeded_ = 0;
};

TEST(KVCacheRandom, InvariantsHoldWithPrefixCaching) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    RandomKVWorkload w(seed, true, xxh3_block_hash);
    w.run(4000);
    ASSERT_FALSE(::testing::Test::HasFatalFailure()) << "seed " << seed;
    EXPECT_GT(w.hit_tokens(), 0u);
    EXPECT_GT(w.copies(), 0);
    EXPECT_GT(w.evicted(), 0u);
    EXPECT_GT(w.failed(), 0);  // some steps did not fit, and changed nothing
    EXPECT_GT(w.succeeded(), 1000);
  }
}

// Ignores the parent and the extra keys and collides constantly.
BlockHash weak_hash(BlockHash, std::span<const int32_t> tokens, std::string_view) {
  return BlockHash{tokens.empty() ? 0 : uint64_t(uint32_t(tokens.back())) % 2};
}

TEST(KVCacheRandom, InvariantsHoldUnderConstantHashCollisions) {
  RandomKVWorkload w(7, true, weak_hash);
  w.run(4000);
  EXPECT_GT(w.hit_tokens(), 0u);
}

TEST(KVCacheRandom, InvariantsHoldWithoutPrefixCaching) {
  RandomKVWorkload w(11, false, xxh3_block_hash);
  w.run(3000);
  EXPECT_EQ(w.hit_tokens(), 0u);
}

}  // namespace
}  // namespace db
