#include "runner/model_runner.h"

#include <chrono>
#include <span>
#include <string>

#include "runner/kv_block_copy.h"
#include "sample/logprobs.h"
#include "spec/verify.h"
#include "util/error.h"

namespace db {

ModelRunner::ModelRunner(Model& model, KVStore& kv, ThreadPool& pool)
    : model_(model), kv_(kv), pool_(pool), samplers_(static_cast<size_t>(pool.size())) {}

const std::vector<int32_t>* ModelRunner::tokens_of(RequestId id) const {
  auto it = seqs_.find(id);
  return it == seqs_.end() ? nullptr : &it->second.tokens;
}

ModelRunnerOutput ModelRunner::execute(const SchedulerOutput& step) {
  sync_sequences(step);
  copy_kv_blocks(kv_, step.block_copies);
  model_.note_block_copies(step.block_copies);

  clear_step(batch_, attn_, kv_.block_size());
  sampled_.clear();
  prompt_rows_.clear();
  for (const ScheduledRequest& r : step.scheduled_running) add_to_batch(r, seqs_.at(r.id));
  for (const ScheduledRequest& r : step.scheduled_new) add_to_batch(r, seqs_.at(r.id));

  ModelRunnerOutput out;
  if (batch_.num_tokens() == 0) return out;
  model_.forward(batch_, attn_, kv_, pool_, logits_);
  score_prompts(out);
  sample_rows(out);
  return out;
}

void ModelRunner::sync_sequences(const SchedulerOutput& step) {
  for (RequestId id : step.finished_ids) seqs_.erase(id);
  for (RequestId id : step.preempted_ids) seqs_.erase(id);
  for (const ScheduledRequest& r : step.scheduled_new) {
    DB_CHECK(r.new_data.has_value(), "sequence " + std::to_string(r.id) + " is new to the runner but has no data");
    Sequence& s = seqs_[r.id];
    s.tokens = r.new_data->tokens;
    s.num_prompt_tokens = r.new_data->num_prompt_tokens;
    s.sampling = r.new_data->sampling;
    s.sampler_state = r.new_data->sampler_state;
    s.group_id = r.new_data->group_id;
    s.scores_prompt = s.sampling.prompt_logprobs.has_value() && r.id == s.group_id;
    start_constraint(r.id, s);
  }
  for (const ScheduledRequest& r : step.scheduled_running)
    DB_CHECK(seqs_.count(r.id), "the runner holds no state for running sequence " + std::to_string(r.id));
}

void ModelRunner::start_constraint(RequestId id, Sequence& s) {
  s.constraint.reset();
  if (!s.sampling.constraint) return;
  s.constraint = s.sampling.constraint->start();
  s.mask.resize(static_cast<size_t>(token_mask_words(model_.config().vocab)));
  s.constraint_active = s.sampling.constraint_after_token < 0;
  for (size_t i = static_cast<size_t>(s.num_prompt_tokens); i < s.tokens.size(); ++i) {
    if (!s.constraint_active) {
      s.constraint_active = s.tokens[i] == s.sampling.constraint_after_token;
      continue;
    }
    DB_CHECK(s.constraint->accept(s.tokens[i]), "sequence " + std::to_string(id) + ": output token " +
                                                    std::to_string(s.tokens[i]) + " breaks its " +
                                                    s.sampling.constraint->describe() + " constraint");
  }
}

void ModelRunner::add_to_batch(const ScheduledRequest& r, Sequence& seq) {
  const int32_t begin = r.num_computed_tokens, end = begin + r.num_scheduled_tokens;
  const auto known = static_cast<int32_t>(seq.tokens.size());
  const auto drafts = static_cast<int32_t>(r.draft_tokens.size());
  DB_CHECK(r.num_scheduled_tokens > 0 && begin >= 0 && end <= known + drafts &&
               (drafts == 0 || (begin == known - 1 && end == known + drafts && r.num_samples == 1)),
           "sequence " + std::to_string(r.id) + ": tokens [" + std::to_string(begin) + ", " + std::to_string(end) +
               ") scheduled, " + std::to_string(known) + " known and " + std::to_string(drafts) + " drafts");
  const int32_t bs = kv_.block_size();
  DB_CHECK(static_cast<int64_t>(r.block_ids.size()) * bs >= end,
           "sequence " + std::to_string(r.id) + ": its blocks do not cover the step");
  for (int32_t pos = begin; pos < end; ++pos) {
    batch_.token_ids.push_back(pos < known ? seq.tokens[static_cast<size_t>(pos)]
                                           : r.draft_tokens[static_cast<size_t>(pos - known)]);
    batch_.positions.push_back(pos);
    attn_.slot_mapping.push_back(static_cast<int64_t>(r.block_ids[static_cast<size_t>(pos / bs)]) * bs + pos % bs);
  }
  batch_.query_start.push_back(batch_.num_tokens());
  attn_.context_lens.push_back(end);
  attn_.block_tables.push_back(r.block_ids);
  if (seq.scores_prompt && begin < seq.num_prompt_tokens) {
    // Positions [begin, last) score the prompt tokens after them; the last prompt
    // position's logits are the first sample's.
    const int32_t last = std::min(end, seq.num_prompt_tokens - 1);
    const int32_t first = begin == 0 ? 0 : begin + 1;
    if (last + 1 > first) prompt_rows_.push_back({&seq, first, last + 1, begin, batch_.logits_indices.size()});
    for (int32_t pos = begin; pos < last; ++pos) batch_.logits_indices.push_back(batch_.num_tokens() - (end - pos));
  }
  if (r.num_samples > 0) {
    DB_CHECK(end == known + drafts, "sequence " + std::to_string(r.id) + " samples before its last known token");
    sampled_.push_back({&r, &seq, batch_.logits_indices.size()});
    for (int32_t row = drafts; row >= 0; --row) batch_.logits_indices.push_back(batch_.num_tokens() - 1 - row);
  }
}

// A sequence's constraint as verification sees it: no mask until
// constraint_after_token was emitted (when set), then the grammar's.
class ModelRunner::ConstraintStep final : public VerifyConstraint {
 public:
  ConstraintStep(Sequence& seq, RequestId id, SampleScratch& scratch) : seq_(seq), id_(id), scratch_(scratch) {}
  std::span<const uint32_t> next_mask() override {
    if (!seq_.constraint || !seq_.constraint_active) return {};
    const auto t0 = std::chrono::steady_clock::now();
    seq_.constraint->fill_mask(seq_.mask);
    scratch_.mask_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++scratch_.masks;
    return seq_.mask;
  }
  void advance(int32_t token) override {
    if (!seq_.constraint) return;
    if (!seq_.constraint_active) {
      seq_.constraint_active = token == seq_.sampling.constraint_after_token;  // applies from the next token
      return;
    }
    // The mask allowed it, so this holds unless the constraint engine is wrong.
    DB_CHECK(seq_.constraint->accept(token), "sequence " + std::to_string(id_) + ": sampled token " +
                                                 std::to_string(token) + " breaks its constraint");
  }

 private:
  Sequence& seq_;
  RequestId id_;
  SampleScratch& scratch_;
};

// The rows are independent, so the threads split them, each with its own
// sampler. Tokens are appended only once every row is sampled; a row that
// throws fails the whole step (its sequences end), so the constraint states it
// advanced are never used again.
void ModelRunner::sample_rows(ModelRunnerOutput& out) {
  const auto n = static_cast<int64_t>(sampled_.size());
  std::vector<RequestSamples> rows(sampled_.size());
  std::vector<SampleScratch> scratch(samplers_.size());
  pool_.run([&](int tid, int nth) {
    for (int64_t row = n * tid / nth; row < n * (tid + 1) / nth; ++row)
      rows[static_cast<size_t>(row)] = sample_row(samplers_[static_cast<size_t>(tid)], static_cast<size_t>(row),
                                                  scratch[static_cast<size_t>(tid)]);
  });
  for (const SampleScratch& s : scratch) {
    constraint_mask_seconds_ += s.mask_seconds;
    constraint_masks_ += s.masks;
  }
  out.requests.reserve(rows.size());
  for (size_t row = 0; row < rows.size(); ++row) {
    Sequence& seq = *sampled_[row].seq;
    if (sampled_[row].req->num_samples > 1) {
      seq.tokens.push_back(rows[row].samples.front().token);  // the parent keeps the first; forks copy theirs
    } else {
      for (const SampledToken& t : rows[row].samples) seq.tokens.push_back(t.token);
    }
    out.requests.push_back(std::move(rows[row]));
  }
}

void ModelRunner::score_prompts(ModelRunnerOutput& out) {
  if (prompt_rows_.empty()) return;
  const int32_t vocab = model_.config().vocab;
  out.prompt_logprobs.resize(prompt_rows_.size());
  std::vector<std::pair<size_t, int32_t>> work;  // (prompt_rows_ index, position > 0 to score)
  for (size_t i = 0; i < prompt_rows_.size(); ++i) {
    const PromptRows& p = prompt_rows_[i];
    PromptLogprobs& pl = out.prompt_logprobs[i];
    pl.group_id = p.seq->group_id;
    pl.first_position = p.first_position;
    pl.tokens.resize(static_cast<size_t>(p.end_position - p.first_position));
    for (int32_t q = p.first_position; q < p.end_position; ++q) {
      pl.tokens[static_cast<size_t>(q - p.first_position)].token = p.seq->tokens[static_cast<size_t>(q)];
      if (q > 0) work.emplace_back(i, q);
    }
  }
  const auto n = static_cast<int64_t>(work.size());
  pool_.run([&](int tid, int nth) {
    for (int64_t w = n * tid / nth; w < n * (tid + 1) / nth; ++w) {
      const auto [i, q] = work[static_cast<size_t>(w)];
      const PromptRows& p = prompt_rows_[i];
      const size_t row = p.first_logits_row + static_cast<size_t>(q - 1 - p.chunk_begin);
      const float* logits = logits_.data() + row * static_cast<size_t>(vocab);
      SampledToken& t = out.prompt_logprobs[i].tokens[static_cast<size_t>(q - p.first_position)];
      const double log_sum = log_sum_exp(logits, vocab);
      t.logprob = static_cast<float>(logits[t.token] - log_sum);
      t.top_logprobs = top_logprobs(logits, vocab, *p.seq->sampling.prompt_logprobs, log_sum);
    }
  });
}

RequestSamples ModelRunner::sample_row(Sampler& sampler, size_t row, SampleScratch& scratch) const {
  const int32_t vocab = model_.config().vocab;
  const ScheduledRequest& r = *sampled_[row].req;
  Sequence& seq = *sampled_[row].seq;
  const float* logits = logits_.data() + sampled_[row].logits_row * static_cast<size_t>(vocab);
  const std::span<const int32_t> all(seq.tokens);
  const auto num_prompt = static_cast<size_t>(seq.num_prompt_tokens);
  ConstraintStep constraint(seq, r.id, scratch);
  RequestSamples rs;
  rs.id = r.id;
  const auto keep = [&rs](SampleResult& res) {
    rs.samples.push_back(SampledToken{res.token, res.logprob, std::move(res.top_logprobs)});
  };
  if (r.num_samples > 1) {  // n > 1: every first token from the same state and mask
    const std::span<const uint32_t> allowed = constraint.next_mask();
    const TokenHistory history{all.first(num_prompt), all.subspan(num_prompt)};
    for (int32_t k = 0; k < r.num_samples; ++k) {
      SamplerState state = seq.sampler_state;
      state.stream += static_cast<uint32_t>(k);
      SampleResult res = sampler.sample(logits, vocab, seq.sampling, state, history, allowed);
      keep(res);
    }
    constraint.advance(rs.samples.front().token);  // the parent's; forks rebuild theirs from their tokens
    return rs;
  }
  VerifyInput in;
  in.logits = logits;
  in.vocab = vocab;
  in.params = &seq.sampling;
  in.state = &seq.sampler_state;
  in.prompt = all.first(num_prompt);
  in.output = all.subspan(num_prompt);
  in.drafts = r.draft_tokens;
  for (SampleResult& res : verify_drafts(sampler, in, scratch.history, &constraint)) keep(res);
  return rs;
}

}  // namespace db
