#include "spec/draft_model_proposer.h"

#include <algorithm>
#include <chrono>

#include "sample/sampler.h"
#include "util/error.h"

namespace db {

DraftModelProposer::DraftModelProposer(std::unique_ptr<DraftModel> draft, ThreadPool& pool, int32_t num_blocks,
                                       int32_t block_size, DType kv_dtype)
    : draft_(std::move(draft)),
      pool_(pool),
      kv_(draft_->model().kv_cache_shape(), num_blocks, block_size, kv_dtype),
      tables_(num_blocks, block_size) {}

void DraftModelProposer::forget(RequestId id) { tables_.forget(id); }

void DraftModelProposer::forward(std::vector<Active>& active, std::vector<std::vector<int32_t>>& drafts) {
  if (active.empty()) return;
  clear_step(batch_, attn_, tables_.block_size());
  attn_.block_tables.resize(active.size());
  for (size_t a = 0; a < active.size(); ++a) {
    const Active& x = active[a];
    for (size_t t = 0; t < x.feed.size(); ++t) {
      const int32_t pos = x.first_position + static_cast<int32_t>(t);
      batch_.token_ids.push_back(x.feed[t]);
      batch_.positions.push_back(pos);
      attn_.slot_mapping.push_back(tables_.slot(*x.seq, pos));
    }
    batch_.query_start.push_back(batch_.num_tokens());
    if (x.samples) batch_.logits_indices.push_back(batch_.num_tokens() - 1);
    attn_.context_lens.push_back(x.first_position + static_cast<int32_t>(x.feed.size()));
    attn_.block_tables[a] = x.seq->blocks;
  }
  const auto start = std::chrono::steady_clock::now();
  draft_->model().forward(batch_, attn_, kv_, pool_, logits_);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto drafting = static_cast<int32_t>(batch_.logits_indices.size());
  if (drafting > 0 && batch_.num_tokens() <= 2 * static_cast<int32_t>(active.size())) {
    const double per_token = seconds / drafting;
    seconds_per_token_ = seconds_per_token_ == 0 ? per_token : 0.8 * seconds_per_token_ + 0.2 * per_token;
  }
  const auto vocab = static_cast<size_t>(draft_->model().config().vocab);
  size_t row = 0;
  for (Active& x : active) {
    x.seq->cached.insert(x.seq->cached.end(), x.feed.begin(), x.feed.end());
    if (x.samples) drafts[x.query].push_back(argmax(logits_.data() + row++ * vocab, draft_->draft_vocab()));
  }
}

void DraftModelProposer::propose(std::span<const DraftQuery> queries, std::vector<std::vector<int32_t>>& drafts) {
  ++step_;
  drafts.resize(queries.size());
  for (auto& d : drafts) d.clear();
  for (const DraftQuery& q : queries) tables_[q.id].last_used = step_;  // not evicted by this step's reserve()
  const int32_t max_context = draft_->model().config().max_context;
  const int32_t model_vocab = draft_->model().config().vocab;
  int32_t budget = kCatchUpTokens;
  active_.clear();
  for (size_t i = 0; i < queries.size(); ++i) {
    const DraftQuery& q = queries[i];
    Seq& s = tables_[q.id];
    const auto len = static_cast<int32_t>(q.tokens.size());
    if (len == 0 || q.max_drafts < 1) continue;
    // Keep the cache's prefix that matches the sequence (rejected drafts fall
    // away), and always feed at least the newest token: its logits give draft 1.
    const size_t n = std::min(s.cached.size(), q.tokens.size());
    const auto same = static_cast<int32_t>(
        std::mismatch(s.cached.begin(), s.cached.begin() + static_cast<std::ptrdiff_t>(n), q.tokens.begin()).first -
        s.cached.begin());
    const int32_t common = std::min(same, len - 1);
    s.cached.resize(static_cast<size_t>(common));
    if (len + q.max_drafts - 1 > max_context) continue;
    const int32_t take = std::min(len - common, budget);
    if (take <= 0) continue;
    const std::span<const int32_t> feed = q.tokens.subspan(static_cast<size_t>(common), static_cast<size_t>(take));
    if (std::any_of(feed.begin(), feed.end(), [&](int32_t t) { return t < 0 || t >= model_vocab; })) continue;
    const bool complete = common + take == len;
    if (!tables_.reserve(s, complete ? len + q.max_drafts - 1 : common + take, step_)) continue;
    budget -= take;
    drafts[i].reserve(static_cast<size_t>(q.max_drafts));
    active_.push_back({i, &s, feed, common, complete});
  }
  // Round 0 catches up and drafts token 1; round r feeds draft r and drafts token r + 1.
  for (int32_t r = 1; !active_.empty(); ++r) {
    forward(active_, drafts);
    size_t kept = 0;
    for (const Active& x : active_) {
      if (!x.samples || queries[x.query].max_drafts <= r) continue;
      const std::vector<int32_t>& d = drafts[x.query];
      active_[kept++] = {x.query, x.seq, std::span<const int32_t>(&d.back(), 1),
                         static_cast<int32_t>(x.seq->cached.size()), true};
    }
    active_.resize(kept);
  }
}

}  // namespace db
