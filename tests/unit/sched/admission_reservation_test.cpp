// The reserve rule's block counts (sched/admission_reservation.h) on a real KV
// cache manager: the reservation of a sequence (headroom, max_tokens, context
// and forks), what it lacks beyond its blocks, and what admitting costs when
// another sequence holds its prefix.
#include "sched/admission_reservation.h"

#include <gtest/gtest.h>

#include <vector>

#include "sched_test_util.h"

namespace db::test {
namespace {

// A request of prompt first, first + 1, ..., first + prompt_len - 1.
Request waiting(RequestId id, int32_t prompt_len, int32_t max_tokens, int32_t n = 1, int32_t first = 1) {
  return make_request(params(id, iota_tokens(first, prompt_len), max_tokens, 1, n), 0);
}

TEST(AdmissionReservation, CommittedBlocksCoverTheTokensAndTheHeadroom) {
  SchedulerConfig c = tiny_config();  // blocks of 4 tokens, context 64
  c.decode_headroom_tokens = 6;
  // 10 prompt tokens + 6 outputs: KV for 15 positions (not the newest token) = 4 blocks.
  EXPECT_EQ(committed_blocks(waiting(1, 10, 100), c), 4);
  // max_tokens below the headroom: 10 + 2 - 1 = 11 positions = 3 blocks.
  EXPECT_EQ(committed_blocks(waiting(1, 10, 2), c), 3);
  // The context caps it: 60 prompt tokens may hold KV for 63 positions at most = 16 blocks.
  EXPECT_EQ(committed_blocks(waiting(1, 60, 100), c), 16);
  // Outputs so far count as tokens; the headroom is measured past them.
  Request r = waiting(1, 10, 100);
  r.tokens.insert(r.tokens.end(), {7, 7, 7});
  EXPECT_EQ(committed_blocks(r, c), 5);  // 13 + 6 - 1 = 18 positions
  // A parent of 3 samples: 4 blocks, of which the 2 full prompt blocks are shared;
  // each of the 2 other forks writes its own 2-block tail.
  EXPECT_EQ(committed_blocks(waiting(1, 10, 100, 3), c), 4 + 2 * 2);
}

TEST(AdmissionReservation, RunningSequencesLackWhatTheirBlocksDoNotCover) {
  SchedulerConfig c = tiny_config(8, 64, 32, /*caching=*/true);
  c.decode_headroom_tokens = 6;
  KVCacheManager kv(c.block_size, c.num_blocks, c.enable_prefix_caching);
  Request a = waiting(1, 10, 100), b = waiting(2, 5, 100, 1, /*first=*/100);
  for (Request* r : {&a, &b}) {
    SlotRequest s;
    s.tokens = r->tokens;
    s.num_new_tokens = r->num_tokens();
    ASSERT_TRUE(kv.allocate_slots(r->id, s));
  }
  EXPECT_EQ(lacking_blocks(a, c, kv), 4 - 3);  // holds ceil(10 / 4) blocks
  EXPECT_EQ(lacking_blocks(b, c, kv), 3 - 2);  // 5 + 6 - 1 = 10 positions; holds 2
  std::vector<Request*> running = {&a, &b};
  EXPECT_EQ(outstanding_blocks(running, c, kv), 2);
  // With a headroom of one output, a's 3 blocks cover its reservation.
  c.decode_headroom_tokens = 1;
  EXPECT_EQ(lacking_blocks(a, c, kv), 0);

  // A waiting request whose first 8 tokens a's blocks hold: those 2 blocks cost nothing.
  Request w = waiting(3, 10, 100);
  const ComputedBlocks hit = kv.get_computed_blocks(w.id, w.tokens);
  ASSERT_EQ(hit.num_computed_tokens, 8);
  c.decode_headroom_tokens = 6;
  EXPECT_EQ(admission_blocks(w, hit, c, kv), 4 - 2);
  // Once a is gone its cached blocks hold no reference: adopting them takes them
  // from the free ones.
  kv.free(a.id);
  EXPECT_EQ(admission_blocks(w, kv.get_computed_blocks(w.id, w.tokens), c, kv), 4);
}

}  // namespace
}  // namespace db::test
