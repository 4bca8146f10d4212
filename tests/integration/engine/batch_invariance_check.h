// Batch invariance, for any model: a request's greedy tokens alone (an engine
// with nothing else in flight) are exactly its tokens inside a batch of many
// mixed requests, whatever the chunking, prefix caching, block size or
// preemption by recompute. Each model's test picks the prompts and the batch.
#pragma once
#include <cstddef>
#include <vector>

#include "engine_test_util.h"

namespace db::test {

// A request of the batch and the alone request with the same prompt: each of its
// n greedy samples must be the first max_tokens tokens of that request alone.
struct BatchEntry {
  EngineRequest request;
  size_t alone_index = 0;
};

// Runs each of `base` (greedy, n = 1, ignore_eos) alone, expecting exactly its
// max_tokens tokens, finished by length, and outputs that differ across most
// prompts (else the comparison would prove little). Then runs `batch` under each
// case below in one engine of `cfg` (block size, threads, KV dtype as given;
// max_num_seqs = the number of requests), compares every sample with its alone
// reference and checks the stats: preemptions when the pool is small, cache hits
// exactly when prefix caching is on, every block back at the end. The cases:
//   block size 16: a 16-token budget with prefix caching (long chunked prefills);
//                  a 16-token long-prefill threshold without it; a pool of 40
//                  blocks (preemption) with it.
//   block size 64: the 16-token budget; a pool of 12 blocks with the 16-token
//                  threshold and no prefix caching.
// The small pools above run under the first-chunk admission rule. At block size
// 16, one more runs under the default reserve rule with a decode headroom of one
// output, so that sequences outgrow what their admission reserved and preempt one
// another by recompute: a pool of 24 blocks with prefix caching. Every small-pool
// case must preempt.
// With cfg.speculative enabled, the references still decode plainly (no
// drafts): each request alone with speculation, and the batch with it, must
// give exactly their tokens, with drafts verified and some accepted.
void expect_batch_invariance(ModelBundle& bundle, const EngineConfig& cfg, const std::vector<EngineRequest>& base,
                             const std::vector<BatchEntry>& batch);

}  // namespace db::test
