// The SLA controller (sched/sla_controller.h) inside the engine: feeds it each
// step's record and the first-token and per-output-token times of its requests
// (as the engine sees them: from submission, so without HTTP or tokenization),
// and turns its settings into the scheduler's step limits.
#pragma once
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/step_composition.h"
#include "sched/scheduler.h"
#include "sched/sla_controller.h"

namespace db {

class SlaLoop {
 public:
  // `long_prefill_threshold`: the configured one (0 = auto, a quarter of the budget).
  SlaLoop(SlaControllerConfig cfg, int32_t long_prefill_threshold, int32_t block_size);

  // After Scheduler::update(): `done` is the step's end (steady-clock seconds),
  // `comp` was described before the update (with sampling), `outs` are its outputs.
  void observe(const SchedulerOutput& so, const StepComposition& comp, const std::vector<RequestOutput>& outs,
               double done, double seconds, int32_t waiting);
  // The window's decision and the scheduler limits it sets, once a window is complete.
  std::optional<SlaDecision> decide(double now);
  StepLimits step_limits() const;

  SlaControllerSnapshot snapshot() const { return ctl_.snapshot(); }
  // Drops what it holds of a sequence that ended other than in a step it observed
  // (aborted, stopped on the output side, timed out); no-op for an unknown id.
  void forget(RequestId id) { first_token_at_.erase(id); }

 private:
  SlaController ctl_;
  int32_t long_prefill_threshold_, block_size_;
  std::unordered_map<RequestId, double> first_token_at_;  // sequences that have sampled, by id
};

}  // namespace db
