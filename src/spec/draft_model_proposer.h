// Drafts with a smaller model of the target's vocabulary (draft_model.h): for
// each sequence it feeds the draft model the tokens it has not seen yet, then
// decodes greedily up to max_drafts tokens, all sequences batched in one
// padding-free step per draft position (the draft model runs on the engine's
// threads, before the target's step).
//
// Each sequence keeps its own draft KV cache in a paged store of its own: a
// block table and the tokens whose K/V it holds. Before drafting, the cache is
// cut back to the longest prefix it shares with the sequence (rejected drafts
// fall away there), so rolling back costs nothing. The store holds as many
// tokens as the target's pool; when it is full, the caches of the sequences
// not drafting this step that were used longest ago are dropped, and a
// sequence that still does not fit drafts nothing this step.
//
// Greedy drafts make the draft distribution a point mass, so verification
// (verify.h) keeps the target's distribution exactly.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "model/kv_store.h"
#include "spec/draft_model.h"
#include "spec/draft_proposer.h"
#include "spec/seq_block_tables.h"
#include "util/thread_pool.h"

namespace db {

class DraftModelProposer final : public DraftProposer {
 public:
  // At most kCatchUpTokens prompt/output tokens are fed per step to bring
  // caches up to date; a sequence not caught up in a step drafts nothing in it.
  static constexpr int32_t kCatchUpTokens = 256;

  // `pool` must outlive the proposer. The KV store holds num_blocks blocks of
  // block_size tokens in `kv_dtype`.
  DraftModelProposer(std::unique_ptr<DraftModel> draft, ThreadPool& pool, int32_t num_blocks, int32_t block_size,
                     DType kv_dtype);

  void propose(std::span<const DraftQuery> queries, std::vector<std::vector<int32_t>>& drafts) override;
  void forget(RequestId id) override;
  std::string name() const override { return "draft_model"; }
  // Measured over draft forwards that feed at most 2 tokens per sequence.
  double seconds_per_draft_token() const override { return seconds_per_token_; }

  int64_t kv_blocks_in_use() const override { return tables_.blocks_in_use(); }

 private:
  struct Seq {
    std::vector<int32_t> blocks;  // block table
    std::vector<int32_t> cached;  // the tokens whose K/V the blocks hold, by position
    uint64_t last_used = 0;       // step it last drafted in
    void reset() { cached.clear(); }
  };
  // One sequence's part in a draft forward.
  struct Active {
    size_t query;                 // index into the step's queries
    Seq* seq;
    std::span<const int32_t> feed;  // tokens fed this round
    int32_t first_position;         // position of feed[0]
    bool samples;                   // its last fed token's logits give a draft
  };

  // Runs the draft model over `active` and appends each sampling sequence's argmax to its draft.
  void forward(std::vector<Active>& active, std::vector<std::vector<int32_t>>& drafts);

  std::unique_ptr<DraftModel> draft_;
  ThreadPool& pool_;
  KVStore kv_;
  SeqBlockTables<Seq> tables_;
  uint64_t step_ = 0;
  double seconds_per_token_ = 0;  // weighted mean over recent drafting forwards
  // Per-step buffers, reused.
  Batch batch_;
  AttentionMetadata attn_;
  std::vector<float> logits_;
  std::vector<Active> active_;
};

}  // namespace db
