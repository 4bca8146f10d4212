// The engine's speculation: before each step it asks the proposer for drafts
// of the decoding sequences the governor lets draft (draft_governor.h) and
// hands them to the scheduler; after it, it folds the verification outcomes
// into the governor, the step cost model and the counters.
//
// How much drafting pays is the governor's call (draft_governor.h), from the
// step cost model it keeps here, fed with every step without prompt tokens,
// and from what the proposer itself costs per draft token (a draft model's
// forward passes; nothing to speak of for prompt lookup).
#pragma once
#include <memory>

#include "sched/scheduler.h"
#include "spec/draft_governor.h"
#include "spec/draft_proposer.h"
#include "spec/spec_decode_stats.h"
#include "spec/speculative_config.h"
#include "spec/step_cost_model.h"

namespace db {

class SpeculativeDecoder {
 public:
  // cfg must be enabled and valid. `proposer`: cfg.method's proposer when it
  // needs more than the configuration (draft_model: a DraftModelProposer);
  // null for prompt lookup, which is built here.
  explicit SpeculativeDecoder(const SpeculativeConfig& cfg, std::unique_ptr<DraftProposer> proposer = nullptr);

  // Sets draft tokens on the running decodes that get some this step.
  void propose(Scheduler& sched);
  // After the step `so` (executed as `ro`, and folded into `sched`) that computed
  // `tokens` tokens, `prompt_tokens` of them at prompt positions, in `seconds`.
  void observe(const SchedulerOutput& so, const ModelRunnerOutput& ro, const Scheduler& sched, int32_t tokens,
               int32_t prompt_tokens, double seconds);
  // The sequence ended: drop what the governor and the proposer keep for it.
  void forget(RequestId id);
  const SpecDecodeStats& stats() const { return stats_; }

 private:
  // The marginal seconds of one more token over the step's seconds per token,
  // at `running` tokens (0 while unmeasured): for the stats.
  double cost_ratio(int32_t running) const;
  // Shows the proposer the step that ran (DraftProposer::observe_step).
  void show_step(const SchedulerOutput& so, const Scheduler& sched);

  std::unique_ptr<DraftProposer> proposer_;
  DraftGovernor governor_;
  bool adaptive_;
  double fill_ = 1;  // recent draft tokens delivered / asked for
  StepCostModel cost_;
  SpecDecodeStats stats_;
  // Per-step buffers, reused.
  std::vector<DraftQuery> queries_;
  std::vector<RequestId> decodes_;
  std::vector<std::vector<int32_t>> drafts_;
  std::vector<TargetStepSequence> step_seqs_;
};

}  // namespace db
