// What a scheduled step holds, read before Scheduler::update(): how many of its
// tokens are at prompt positions, how many sequences decode, and how many
// tokens of KV its attention reads.
#pragma once
#include <cstdint>
#include <vector>

#include "sched/scheduler.h"

namespace db {

struct StepComposition {
  int32_t prompt_tokens = 0;   // scheduled tokens at prompt positions (recomputed output counts as output)
  int32_t decodes = 0;         // sequences that sample a token after their first
  int32_t prompts_cut = 0;     // sequences whose prompt goes on after this step (a chunk was cut)
  int64_t context_tokens = 0;  // sum over sequences of the tokens attention reads (computed + scheduled)
  // The sequences that sample this step, with what update() will change.
  struct Sampling {
    RequestId id = 0;
    double arrival_time = 0;        // the request's, steady-clock seconds
    int32_t outputs_before = 0;     // output tokens before the step
  };
  std::vector<Sampling> sampling;  // filled only when asked for; sorted by id
  const Sampling* find_sampling(RequestId id) const;  // nullptr when `id` does not sample
};

// `with_sampling`: also list the sampling sequences.
StepComposition describe_step(const SchedulerOutput& so, const Scheduler& sched, bool with_sampling);

}  // namespace db
