// Drafts with the target's own multi-token-prediction module (DeepSeek-V3's
// nextn layer, model/mtp_module.h).
//
// The module keeps a one-layer KV cache per sequence in a paged store of its
// own. After every target step (observe_step) it computes the entries of the
// positions whose next token is now known, from the target's final hidden
// states of that step, prompt chunks included: entry j needs h_j and t_{j+1},
// so a sequence of L + 1 tokens has entries [0, L) and keeps m_{L-1}, which
// gives draft 1 at no further cost than the head. Drafts 2..K chain one
// module step each (m_j standing in for h_j), batched across sequences; their
// entries lie past the valid ones and are overwritten by the next step's.
//
// Positions the target computed without this proposer seeing them (a prefix
// cache hit, a forked sample) have no hidden state: their entries are computed
// from a zero state, at most kGapTokens per step, which only makes drafts worse.
// Greedy drafts are a point mass, so verification stays exact.
#pragma once
#include <cstdint>
#include <vector>

#include "model/kv_store.h"
#include "model/model.h"
#include "spec/draft_proposer.h"
#include "spec/seq_block_tables.h"
#include "util/thread_pool.h"

namespace db {

class MtpProposer final : public DraftProposer {
 public:
  static constexpr int32_t kGapTokens = 256;

  // target.mtp() must be loaded; target and pool must outlive the proposer. The
  // KV store holds num_blocks blocks of block_size tokens in `kv_dtype`.
  MtpProposer(Model& target, ThreadPool& pool, int32_t num_blocks, int32_t block_size, DType kv_dtype);

  void propose(std::span<const DraftQuery> queries, std::vector<std::vector<int32_t>>& drafts) override;
  bool observes_steps() const override { return true; }
  void observe_step(std::span<const TargetStepSequence> seqs) override;
  void forget(RequestId id) override { tables_.forget(id); }
  double seconds_per_draft_token() const override { return seconds_per_token_; }
  int64_t kv_blocks_in_use() const override { return tables_.blocks_in_use(); }
  std::string name() const override { return "mtp"; }

 private:
  struct Seq {
    std::vector<int32_t> blocks;  // block table
    int32_t valid = 0;            // entries [0, valid) come from the target's states and the true tokens
    std::vector<float> last;      // m_{valid - 1} when the sequence is caught up, else empty
    uint64_t last_used = 0;
    void reset() {
      valid = 0;
      last.clear();
    }
  };
  // One sequence's part in a module step: positions [first, first + count), the last in row last_row.
  struct Part {
    Seq* seq;
    int32_t first, count;
    int64_t last_row;
  };

  // Adds a part whose tokens are `next` (t_{j+1} for each position j) to batch_ and attn_.
  void add_part(const Part& p, std::span<const int32_t> next);

  Model& target_;
  MtpModule& mtp_;
  ThreadPool& pool_;
  int32_t vocab_;
  KVStore kv_;
  SeqBlockTables<Seq> tables_;
  uint64_t tick_ = 0;
  double seconds_per_token_ = 0;  // weighted mean over recent proposals
  // Per-call buffers, reused.
  Batch batch_;
  AttentionMetadata attn_;
  std::vector<Part> parts_;
  std::vector<float> hidden_in_, hidden_out_, logits_, next_hidden_;
  std::vector<size_t> active_;  // queries drafting in propose()'s current round
};

}  // namespace db
