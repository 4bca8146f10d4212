// Learns, from measured step times, what one context position's attention costs
// relative to one token's matmuls (PrefillCost::attention_per_position), since
// the model's multiply-accumulate counts alone misjudge it on CPUs, where the
// attention over a cached F16 context runs at a lower rate per MAC than the
// quantized matmuls.
//
// Each step is reduced to its work: the tokens it computes and the context
// positions they attend to (a token at position q attends to q + 1). Step times
// are fitted, by least squares with exponential forgetting, to
//
//   seconds = fixed + per_token * tokens + per_position * positions
//
// and the estimate is per_position / per_token. Until the steps seen pin it
// down (enough steps whose attention matters by the prior, both slopes
// positive), the estimate stays the prior (the model-shape one) or the last
// determined one; an estimate is kept within [prior / 8, prior * 64], a guard
// against a fit thrown off by a noisy machine. Scheduling decisions follow the
// estimate, so they depend on timings; outputs never do, because chunking never
// changes what a sequence computes.
#pragma once
#include <array>
#include <cstdint>

#include "sched/prefill_cost.h"
#include "sched/scheduler_output.h"

namespace db {

class StepCostFit {
 public:
  // The work of one step.
  struct Work {
    double tokens = 0;     // tokens computed
    double positions = 0;  // sum over those tokens of the context positions each attends to
  };
  static Work work_of(const SchedulerOutput& so);

  // `prior`: the estimate to start from (r = 0 keeps r = 0: nothing is fitted).
  // `forgetting`: the weight a step keeps per later step, in (0, 1].
  explicit StepCostFit(PrefillCost prior, double forgetting = 0.998);

  // Adds one step that took `seconds` (> 0; others are ignored). Returns true
  // when the estimate changed.
  bool observe(const Work& w, double seconds);
  bool observe(const SchedulerOutput& so, double seconds) { return observe(work_of(so), seconds); }

  const PrefillCost& estimate() const { return estimate_; }
  // Whether the estimate comes from measurements rather than the prior.
  bool fitted() const { return fitted_; }

 private:
  PrefillCost prior_, estimate_;
  double forgetting_;
  std::array<std::array<double, 3>, 3> xx_{};  // weighted sums of x x^T, x = (1, tokens, positions / 1000)
  std::array<double, 3> xy_{};                 // weighted sums of x * seconds
  double attention_steps_ = 0;                 // weighted count of steps whose attention matters by the prior
  bool fitted_ = false;
};

}  // namespace db
