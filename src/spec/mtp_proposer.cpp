#include "spec/mtp_proposer.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "sample/sampler.h"
#include "util/error.h"

namespace db {

namespace {

MtpModule& loaded_mtp(Model& target) {
  MtpModule* m = target.mtp();
  DB_CHECK(m != nullptr, "the MTP proposer needs a model with a multi-token-prediction layer");
  return *m;
}

}  // namespace

MtpProposer::MtpProposer(Model& target, ThreadPool& pool, int32_t num_blocks, int32_t block_size, DType kv_dtype)
    : target_(target),
      mtp_(loaded_mtp(target)),
      pool_(pool),
      vocab_(target.config().vocab),
      kv_(mtp_.kv_cache_shape(), num_blocks, block_size, kv_dtype),
      tables_(num_blocks, block_size) {}

void MtpProposer::add_part(const Part& p, std::span<const int32_t> next) {
  for (int32_t i = 0; i < p.count; ++i) {
    batch_.token_ids.push_back(next[static_cast<size_t>(i)]);
    batch_.positions.push_back(p.first + i);
    attn_.slot_mapping.push_back(tables_.slot(*p.seq, p.first + i));
  }
  batch_.query_start.push_back(batch_.num_tokens());
  attn_.context_lens.push_back(p.first + p.count);
  attn_.block_tables.push_back(p.seq->blocks);
}

void MtpProposer::observe_step(std::span<const TargetStepSequence> seqs) {
  ++tick_;
  const std::span<const float> hidden = target_.last_hidden_states();
  const int64_t h = mtp_.hidden_size();
  clear_step(batch_, attn_, tables_.block_size());
  parts_.clear();
  hidden_in_.clear();
  int32_t gap_budget = kGapTokens;
  for (const TargetStepSequence& t : seqs) {
    Seq& s = tables_[t.id];
    s.last_used = tick_;
    s.last.clear();
    const auto len = static_cast<int32_t>(t.tokens.size());
    // Entries the step's states recompute are redone; entry j needs t_{j+1}.
    s.valid = std::min(s.valid, t.first_position);
    const int32_t gap = t.first_position - s.valid;
    int32_t end = std::min(t.first_position + t.num_tokens, len - 1);
    if (gap > gap_budget) end = s.valid + gap_budget;  // this step's states come too late: fill the gap only
    if (end <= s.valid || static_cast<int64_t>(t.row + t.num_tokens) * h > static_cast<int64_t>(hidden.size()))
      continue;
    if (!tables_.reserve(s, end, tick_)) {
      tables_.release(s);
      continue;
    }
    gap_budget -= std::min(gap, end - s.valid);
    const Part p{&s, s.valid, end - s.valid, batch_.num_tokens() + end - s.valid - 1};
    add_part(p, t.tokens.subspan(static_cast<size_t>(p.first) + 1, static_cast<size_t>(p.count)));
    hidden_in_.resize(hidden_in_.size() + static_cast<size_t>(p.count * h), 0.0f);
    float* rows = hidden_in_.data() + hidden_in_.size() - static_cast<size_t>(p.count * h);
    for (int32_t j = std::max(p.first, t.first_position); j < end; ++j)
      std::memcpy(rows + (j - p.first) * h, hidden.data() + (t.row + j - t.first_position) * h,
                  static_cast<size_t>(h) * sizeof(float));
    s.valid = end;
    if (end == len - 1) parts_.push_back(p);  // caught up: its last block output drafts token 1
  }
  if (batch_.num_tokens() == 0) return;
  mtp_.forward(batch_, attn_, kv_, hidden_in_.data(), pool_, hidden_out_);
  for (const Part& p : parts_) {
    const float* m = hidden_out_.data() + p.last_row * h;
    p.seq->last.assign(m, m + h);
  }
}

void MtpProposer::propose(std::span<const DraftQuery> queries, std::vector<std::vector<int32_t>>& drafts) {
  const auto start = std::chrono::steady_clock::now();
  ++tick_;
  drafts.resize(queries.size());
  for (auto& d : drafts) d.clear();
  const int64_t h = mtp_.hidden_size();
  // Round 0: the head over each caught-up sequence's kept block output.
  std::vector<size_t>& active = active_;
  active.clear();
  hidden_in_.clear();
  for (size_t i = 0; i < queries.size(); ++i) {
    const DraftQuery& q = queries[i];
    Seq& s = tables_[q.id];
    s.last_used = tick_;
    const auto len = static_cast<int32_t>(q.tokens.size());
    if (q.max_drafts < 1 || s.last.empty() || s.valid != len - 1) continue;
    active.push_back(i);
    hidden_in_.insert(hidden_in_.end(), s.last.begin(), s.last.end());
  }
  int64_t drafted = 0;
  for (int32_t r = 0; !active.empty(); ++r) {
    if (r > 0) mtp_.forward(batch_, attn_, kv_, hidden_in_.data(), pool_, hidden_out_);
    const float* rows = r > 0 ? hidden_out_.data() : hidden_in_.data();
    mtp_.project(rows, static_cast<int64_t>(active.size()), pool_, logits_);
    // Next round: each sequence still drafting feeds its newest draft at the position after its last entry.
    std::vector<float>& next_hidden = next_hidden_;
    next_hidden.clear();
    clear_step(batch_, attn_, tables_.block_size());
    size_t kept = 0;
    for (size_t a = 0; a < active.size(); ++a) {
      const size_t i = active[a];
      const DraftQuery& q = queries[i];
      drafts[i].push_back(argmax(logits_.data() + static_cast<int64_t>(a) * vocab_, vocab_));
      ++drafted;
      if (static_cast<int32_t>(drafts[i].size()) >= q.max_drafts) continue;
      Seq& s = tables_[q.id];
      const int32_t pos = s.valid + r;  // the drafted token's predecessor position
      if (!tables_.reserve(s, pos + 1, tick_)) continue;
      add_part({&s, pos, 1, 0}, std::span<const int32_t>(&drafts[i].back(), 1));
      next_hidden.insert(next_hidden.end(), rows + static_cast<int64_t>(a) * h, rows + static_cast<int64_t>(a + 1) * h);
      active[kept++] = i;
    }
    active.resize(kept);
    hidden_in_.swap(next_hidden);
  }
  if (drafted > 0) {
    const double per_token =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / static_cast<double>(drafted);
    seconds_per_token_ = seconds_per_token_ == 0 ? per_token : 0.8 * seconds_per_token_ + 0.2 * per_token;
  }
}

}  // namespace db
