#include "spec/speculative_decoder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <unordered_map>

#include "spec/ngram_proposer.h"
#include "util/error.h"

namespace db {

namespace {

std::unique_ptr<DraftProposer> make_proposer(const SpeculativeConfig& cfg, std::unique_ptr<DraftProposer> given) {
  cfg.validate();
  if (given) return given;
  DB_CHECK(cfg.method == "ngram", "speculative method " + cfg.method + " needs its proposer built by the caller");
  return std::make_unique<NgramProposer>(cfg.ngram_min, cfg.ngram_max);
}

}  // namespace

SpeculativeDecoder::SpeculativeDecoder(const SpeculativeConfig& cfg, std::unique_ptr<DraftProposer> proposer)
    : proposer_(make_proposer(cfg, std::move(proposer))), governor_(cfg.num_tokens), adaptive_(cfg.adaptive) {
  stats_.proposer = proposer_->name();
  stats_.accepted_per_position.assign(static_cast<size_t>(cfg.num_tokens), 0);
}

double SpeculativeDecoder::cost_ratio(int32_t running) const {
  const std::optional<double> base = cost_.seconds(running), more = cost_.seconds(running + 1);
  if (!base || !more || *base <= 0) return 0;
  return std::max(0.0, (*more - *base) / (*base / running));
}

void SpeculativeDecoder::propose(Scheduler& sched) {
  queries_.clear();
  decodes_.clear();
  for (RequestId id : sched.running_ids()) {
    const Request* r = sched.find(id);
    if (r->num_uncomputed_tokens() == 1 && r->num_samples == 1 && r->max_tokens - r->num_output_tokens() > 1)
      decodes_.push_back(r->id);
  }
  if (decodes_.empty()) return;
  const int32_t running = sched.num_running();
  const double draft_cost = proposer_->seconds_per_draft_token();
  const std::vector<int32_t> k = adaptive_ ? governor_.allot(decodes_, running, cost_, fill_, draft_cost)
                                           : std::vector<int32_t>(decodes_.size(), governor_.max_drafts());
  stats_.cost_ratio = cost_ratio(running);
  int64_t asked = 0;
  for (size_t i = 0; i < decodes_.size(); ++i) {
    if (k[i] == 0) {
      ++stats_.paused;
      continue;
    }
    const Request* r = sched.find(decodes_[i]);
    queries_.push_back({r->id, r->tokens, r->num_prompt_tokens, std::min(k[i], r->max_tokens - r->num_output_tokens() - 1)});
    asked += queries_.back().max_drafts;
  }
  if (queries_.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  try {
    proposer_->propose(queries_, drafts_);
  } catch (const std::exception& e) {  // drafts are optional: the step goes on without them
    std::fprintf(stderr, "speculative decoding: the %s proposer failed, no drafts this step: %s\n",
                 proposer_->name().c_str(), e.what());
    for (const DraftQuery& q : queries_) proposer_->forget(q.id);
    return;
  }
  stats_.proposer_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int64_t got = 0;
  for (size_t i = 0; i < queries_.size(); ++i) {
    got += static_cast<int64_t>(drafts_[i].size());
    if (!drafts_[i].empty()) sched.set_draft_tokens(queries_[i].id, std::move(drafts_[i]));
  }
  fill_ = std::max(0.05, 0.9 * fill_ + 0.1 * static_cast<double>(got) / static_cast<double>(asked));
}

void SpeculativeDecoder::show_step(const SchedulerOutput& so, const Scheduler& sched) {
  step_seqs_.clear();
  int64_t row = 0;
  for (const auto* list : {&so.scheduled_running, &so.scheduled_new})
    for (const ScheduledRequest& s : *list) {
      if (const Request* r = sched.find(s.id); r && !is_finished(r->status))  // ended ones are forgotten
        step_seqs_.push_back({s.id, s.num_computed_tokens, s.num_scheduled_tokens, row, r->tokens});
      row += s.num_scheduled_tokens;
    }
  const auto start = std::chrono::steady_clock::now();
  try {
    proposer_->observe_step(step_seqs_);
  } catch (const std::exception& e) {  // as in propose(): drafts are optional
    std::fprintf(stderr, "speculative decoding: the %s proposer failed to follow a step: %s\n",
                 proposer_->name().c_str(), e.what());
    for (const TargetStepSequence& s : step_seqs_) proposer_->forget(s.id);
  }
  stats_.proposer_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void SpeculativeDecoder::forget(RequestId id) {
  governor_.forget(id);
  proposer_->forget(id);
  stats_.proposer_kv_blocks = proposer_->kv_blocks_in_use();
}

void SpeculativeDecoder::observe(const SchedulerOutput& so, const ModelRunnerOutput& ro, const Scheduler& sched,
                                 int32_t tokens, int32_t prompt_tokens, double seconds) {
  for (const auto* ids : {&so.finished_ids, &so.preempted_ids})
    for (RequestId id : *ids) forget(id);
  if (proposer_->observes_steps() && tokens > 0) show_step(so, sched);
  if (prompt_tokens == 0) cost_.observe(tokens, seconds);
  std::unordered_map<RequestId, size_t> emitted;
  for (const RequestSamples& rs : ro.requests) emitted[rs.id] = rs.samples.size();
  for (const auto* list : {&so.scheduled_running, &so.scheduled_new})
    for (const ScheduledRequest& s : *list) {
      if (s.draft_tokens.empty()) continue;
      auto it = emitted.find(s.id);
      if (it == emitted.end()) continue;
      const auto drafted = static_cast<int32_t>(s.draft_tokens.size());
      const int32_t accepted = static_cast<int32_t>(it->second) - 1;
      governor_.record(s.id, drafted, accepted);
      ++stats_.num_drafts;
      stats_.num_draft_tokens += drafted;
      stats_.num_accepted_tokens += accepted;
      stats_.num_emitted_tokens += accepted + 1;
      for (int32_t p = 0; p < accepted && p < static_cast<int32_t>(stats_.accepted_per_position.size()); ++p)
        ++stats_.accepted_per_position[static_cast<size_t>(p)];
    }
}

}  // namespace db
