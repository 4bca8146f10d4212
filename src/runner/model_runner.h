// Executes one scheduled step on the model: applies copy-on-write block
// copies, builds the flat varlen batch and its attention metadata, runs the
// forward pass and samples the sequences whose chunk reached their last token.
// For a group's first sequence whose sampling asks for prompt logprobs, it also
// scores every prompt position the step computes.
//
// It keeps, per sequence, the tokens, sampling parameters and sampler state it
// was given in NewRequestData, appends the tokens it samples, and forgets a
// sequence when the scheduler lists it as preempted or finished. A sequence
// whose sampling has a constraint also keeps its state in it, rebuilt from the
// output tokens whenever the sequence is (re)introduced (a fork, a resumed
// preemption), so the state always matches the tokens. With
// constraint_after_token, the constraint starts after that token's first sampling. It never
// decides who runs; the scheduler never touches tensors.
//
// A sequence scheduled with draft tokens computes them after its newest token;
// its k + 1 rows of logits are verified (spec/verify.h) and the emitted tokens,
// accepted drafts first, are appended and returned as its samples.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/kv_store.h"
#include "model/model.h"
#include "sample/sampler.h"
#include "sched/scheduler_output.h"
#include "util/thread_pool.h"

namespace db {

class ModelRunner {
 public:
  // model, kv and pool must outlive the runner; kv must be shaped for the model.
  ModelRunner(Model& model, KVStore& kv, ThreadPool& pool);

  // Runs the step. Returns one RequestSamples per scheduled sequence with
  // num_samples > 0, in batch order (scheduled_running, then scheduled_new).
  // Throws db::Error for a step inconsistent with what the runner holds (an
  // unknown sequence, tokens it does not have) and for model errors.
  ModelRunnerOutput execute(const SchedulerOutput& step);

  // Drops the state of a sequence that ended (no-op for an unknown id), before a
  // step's finished_ids would report it.
  void forget(RequestId id) { seqs_.erase(id); }
  // Sequences whose state the runner holds.
  size_t num_sequences() const { return seqs_.size(); }
  // The tokens the runner holds for a sequence (nullptr when unknown).
  const std::vector<int32_t>* tokens_of(RequestId id) const;
  // Constraint masks filled so far (one per constrained row sampled) and the
  // seconds spent filling them, summed over threads.
  int64_t constraint_masks() const { return constraint_masks_; }
  double constraint_mask_seconds() const { return constraint_mask_seconds_; }

 private:
  struct Sequence {
    std::vector<int32_t> tokens;     // prompt followed by output
    int32_t num_prompt_tokens = 0;   // leading prompt tokens
    SamplingParams sampling;         // per-token sampling
    SamplerState sampler_state;      // seed and stream
    // With sampling.constraint: where the output so far has taken it, and the
    // buffer for its mask of allowed next tokens.
    std::unique_ptr<TokenConstraintState> constraint;
    std::vector<uint32_t> mask;
    bool constraint_active = false;  // false until sampling.constraint_after_token is sampled (if set)
    RequestId group_id = 0;
    bool scores_prompt = false;  // sampling.prompt_logprobs and the group's first sequence
  };
  struct SampledRow {
    const ScheduledRequest* req;  // the scheduled entry
    Sequence* seq;                // its state
    size_t logits_row;            // its row of logits_ (the first of 1 + drafts rows)
  };
  // Per pool thread: its sampler's counters and scratch.
  struct SampleScratch {
    double mask_seconds = 0;
    int64_t masks = 0;
    std::vector<int32_t> history;  // verification's output history
  };
  class ConstraintStep;
  // The prompt positions [first_position, end_position) a step scores for one
  // sequence: position 0 has no logprob; position q > 0 is scored by the logits
  // of position q - 1, whose row is first_logits_row + (q - 1 - chunk_begin).
  struct PromptRows {
    const Sequence* seq;
    int32_t first_position, end_position;
    int32_t chunk_begin;
    size_t first_logits_row;
  };

  void sync_sequences(const SchedulerOutput& step);
  // Starts `s`'s constraint state (when its sampling has one) and walks it over the outputs it holds.
  void start_constraint(RequestId id, Sequence& s);
  void add_to_batch(const ScheduledRequest& req, Sequence& seq);
  // Samples every row of sampled_ (on the pool's threads), then appends each sequence's tokens.
  void sample_rows(ModelRunnerOutput& out);
  // The prompt logprobs of prompt_rows_ (on the pool's threads).
  void score_prompts(ModelRunnerOutput& out);
  // Row `row`'s samples, with `sampler`'s scratch: n > 1 first samples of a
  // parent, else the tokens verification of its drafts (if any) emits. Changes
  // nothing but the row's constraint state and mask buffer (advanced past the
  // tokens the sequence keeps).
  RequestSamples sample_row(Sampler& sampler, size_t row, SampleScratch& scratch) const;

  Model& model_;
  KVStore& kv_;
  ThreadPool& pool_;
  std::vector<Sampler> samplers_;  // one per pool thread (tid): each has its own scratch
  std::unordered_map<RequestId, Sequence> seqs_;
  // Per-step buffers, reused.
  Batch batch_;
  AttentionMetadata attn_;
  std::vector<SampledRow> sampled_;
  std::vector<PromptRows> prompt_rows_;
  std::vector<float> logits_;
  int64_t constraint_masks_ = 0;
  double constraint_mask_seconds_ = 0;
};

}  // namespace db
