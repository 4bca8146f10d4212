// How many draft tokens each decoding sequence gets in a step, from each
// sequence's acceptance so far and the measured cost of a step by size.
//
// A sequence's acceptance rate a is the chance that its next draft token is
// accepted given the ones before it were: (accepted + 2 g) / (trials + 2) over
// exponentially decaying counts of its verifications (a verification of k
// drafts accepting j counts j successes in j + [j < k] trials), where g is the
// proposer's overall rate, so a new sequence starts from it.
//
// Its j-th draft token is emitted with probability a^j. With n sequences
// running, the step's expected tokens per second when it carries the m draft
// tokens of highest a^j (over all sequences) is
//     (n + f * sum of those m values) / (T(n + f * m) + c * f * m)
// where T is the measured step time (step_cost_model.h), f the share of the
// asked-for draft tokens the proposer has lately delivered and c what the
// proposer has lately taken per draft token. The governor picks
// the m that maximizes it (m = 0: plain decoding), so drafts go where they are
// most likely accepted, shrink as acceptance falls, and stop when the batch
// makes a step compute-bound. A size never measured is measured first: a step
// of n tokens without drafts, then one with every draft. A sequence left
// without drafts probes with one every kProbeInterval steps, so a rate that
// recovers is seen, unless even a sequence accepting kProbeAcceptance of its
// drafts would not pay in this step (a compute-bound batch).
#pragma once
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "spec/step_cost_model.h"
#include "util/request_id.h"

namespace db {

class DraftGovernor {
 public:
  explicit DraftGovernor(int32_t max_drafts) : max_drafts_(max_drafts) {}

  // Draft tokens for each of `ids` (decoding sequences) in a step with `running`
  // sequences; `fill`: the proposer's recent delivered / asked share, in (0, 1];
  // `draft_seconds`: its recent seconds per draft token (c above).
  std::vector<int32_t> allot(std::span<const RequestId> ids, int32_t running, const StepCostModel& cost,
                             double fill, double draft_seconds = 0);
  // One verification of `drafted` drafts of which `accepted` were accepted.
  void record(RequestId id, int32_t drafted, int32_t accepted);
  void forget(RequestId id) { seqs_.erase(id); }

  double acceptance(RequestId id) const;
  double overall_rate() const { return (total_accepted_ + 1.0) / (total_trials_ + 2.0); }
  int32_t max_drafts() const { return max_drafts_; }

  static constexpr int32_t kProbeInterval = 16;
  static constexpr double kProbeAcceptance = 0.9;
  static constexpr double kDecay = 0.8;  // of a sequence's earlier counts per verification

 private:
  struct Seq {
    double accepted = 0, trials = 0;
    int32_t paused_steps = 0;
  };
  // The best number of draft tokens (see above) and, in `order`, the sequences'
  // draft tokens (sequence index per token) by falling value.
  // Whether one sequence accepting kProbeAcceptance of its drafts would raise the step's tokens per second.
  bool could_pay(int32_t running, const StepCostModel& cost, double fill, double draft_seconds) const;
  int32_t best_draft_count(std::span<const RequestId> ids, int32_t running, const StepCostModel& cost, double fill,
                           double draft_seconds, std::vector<size_t>& order) const;

  int32_t max_drafts_;
  std::unordered_map<RequestId, Seq> seqs_;
  double total_accepted_ = 0, total_trials_ = 0;
};

}  // namespace db
