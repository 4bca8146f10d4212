// Limits and switches of the scheduler.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "sched/prefill_cost.h"

namespace db {

// How waiting requests are admitted when KV blocks are short (scheduler.h, "Admission").
enum class AdmissionPolicy {
  // A request is admitted only when the pool holds its whole prompt and its next
  // decode_headroom_tokens outputs beside what every running sequence still needs for
  // its own; under pressure the sequence that loses the least computed work yields.
  Reserve,
  // A request is admitted as soon as its first chunk's blocks are free (vLLM's rule);
  // running sequences that then cannot grow preempt the one that runs last. Under a
  // pool that holds a few of the running sequences, they evict one another repeatedly.
  FirstChunk,
};

struct SchedulerConfig {
  int32_t max_num_seqs = 64;              // running sequences at most (an unforked n-sample request counts n)
  int32_t max_num_batched_tokens = 2048;  // tokens computed per step at most
  int32_t long_prefill_threshold = 0;     // a prompt chunk longer than this is cut to it (0 = no cap)
  int32_t shared_prefill_threshold = 0;   // ... and to this in a step that also serves short work (budget_split.h);
                                          // 0 = auto: an eighth of long_prefill_threshold in whole blocks
  // How capped chunks are priced (budget_split.h): a chunk costs no more than a
  // threshold-sized one at position 0. The default prices a token as one unit
  // wherever it is (caps count tokens); set_prefill_cost() replaces it.
  PrefillCost prefill_cost;
  int32_t block_size = 16;                // tokens per KV block
  int32_t num_blocks = 0;                 // KV pool size, the null block included (>= 2)
  bool enable_prefix_caching = true;      // reuse cached full blocks of identical prefixes
  bool priority_preemption = true;        // a waiting request may preempt running ones of less urgent classes
  AdmissionPolicy admission = AdmissionPolicy::Reserve;
  // Reserve: the outputs a sequence's admission reserves blocks for, ahead of the
  // tokens it holds (all of its remaining ones when fewer); >= 1.
  int32_t decode_headroom_tokens = 512;
  int64_t max_model_len = 0;              // context length: a sequence stops when it holds this many tokens
  std::vector<int32_t> eos_token_ids;     // end-of-generation tokens (unless a request ignores EOS)
  // Per class c: the share of the usable pool that admitting or growing a class-c
  // sequence must leave allocatable (kept for more urgent classes); in [0, 1),
  // non-decreasing with c.
  std::array<double, 3> kv_watermarks{0.0, 0.0, 0.0};
  // Per class: seconds a request may wait for its first admission (0 = no limit);
  // past it the request is promoted one class, or ended when reject_on_queue_timeout.
  std::array<double, 3> max_queue_wait{0.0, 0.0, 0.0};
  bool reject_on_queue_timeout = false;
  // In a step that serves a class-0 sequence, less urgent sequences compute at
  // most this many tokens (those that waited longest first), so the step stays
  // short (0 = no cap).
  int32_t interactive_step_tokens = 0;
  // ... and for this long (seconds on enforce_time_limits' clock) after the last
  // step with class-0 work, so that a class-0 request arriving meanwhile finds a
  // short step in flight rather than a full one.
  double interactive_hold_s = 0;
  // Prompt positions scored for prompt logprobs (SamplingParams::prompt_logprobs) per
  // step, over all requests: each needs a row of logits, so this bounds the step's
  // logits memory (128 x vocab floats: 25 MB at a 49k vocabulary, 66 MB at 129k)
  // whatever the prompts' lengths. Such prompts are prefilled this many tokens a step.
  int32_t max_scored_prompt_rows = 128;
};

}  // namespace db
