// Decides, every step, which sequences compute how many tokens in which KV
// blocks, and folds the sampled tokens back in. It owns the requests, the
// waiting queue and the KV cache manager; it never touches tensors.
//
// schedule():
//   0. when the next waiting request does not fit (sequence slots or blocks for
//      its first chunk, prefix hits not counted) and the running sequence that
//      runs last belongs to a less urgent class, that one is preempted, until
//      the request fits or no less urgent sequence runs.
//   The step budget is split by budget_split.h: short work (decodes, prompt
//   tails, and the short prompts at the front of the waiting queue) is
//   reserved first; long prompts get capped chunks of the rest, capped harder
//   when the step holds short work, so that step stays short.
//   1. running sequences, in service order (request_order.h): each computes a
//      chunk of its missing tokens (one for a decode) within the step budget;
//      a long prompt whose chunk the short work leaves no room for skips the step.
//      When its blocks cannot grow, the running sequence that runs last is
//      preempted by recompute (blocks freed, num_computed_tokens = 0, output
//      kept, back to the FRONT of its class in the waiting queue) until the
//      allocation fits or the sequence preempted itself.
//   2. unless step 1 preempted, waiting sequences in admission order
//      (waiting_queue.h): prefix-cache lookup, then allocation of their first
//      chunk; admission stops at the first one that does not fit (blocks,
//      sequence slots or budget).
//   A sequence whose chunk reaches its last known token samples in that step.
//
// update(): appends the sampled tokens, forks n-sample parents into n
// sequences sharing the prompt's blocks copy-on-write, applies the stop checks
// (stop_check.h) and frees the blocks of finished sequences.
//
// Resuming a preempted sequence recomputes its prompt and its output so far
// (mostly prefix-cache hits) and continues sampling at the same output
// position, so its tokens are those it would have produced unpreempted.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "kvcache/kv_cache_manager.h"
#include "sched/budget_split.h"
#include "sched/request.h"
#include "sched/scheduler_config.h"
#include "sched/scheduler_output.h"
#include "sched/waiting_queue.h"

namespace db {

// What one step did to one sequence, for the engine's output side.
struct RequestOutput {
  RequestId id = 0;                       // sequence id
  RequestId group_id = 0;                 // the request the sequence belongs to
  int32_t sample_index = 0;               // sample index within the group
  std::vector<SampledToken> new_tokens;   // tokens appended by this step
  RequestStatus status = RequestStatus::Running;  // a Finished* status when the sequence ended
  int32_t stop_token = -1;                // the stop token / EOS that ended it, else -1
};

// Monotonic counters (for metrics).
struct SchedulerCounters {
  int64_t steps = 0;                   // schedule() calls that scheduled tokens
  int64_t prompt_tokens_computed = 0;  // scheduled tokens at prompt positions (recomputation included)
  int64_t output_tokens_recomputed = 0;  // scheduled tokens at output positions other than the newest
  int64_t cached_prompt_tokens = 0;    // prompt tokens adopted from the prefix cache at admissions
  int64_t generated_tokens = 0;        // tokens appended by update()
  int64_t preemptions = 0;             // sequences preempted
};

class Scheduler {
 public:
  explicit Scheduler(SchedulerConfig cfg);

  // Queues a new request (its parameters are assumed valid). The ids
  // [p.id, p.id + p.num_samples) must all be unused.
  void add_request(const RequestParams& p);

  // Ends the listed sequences with `status` (a Finished* one), freeing their
  // blocks; unknown ids are ignored. Returns the ids that were live.
  std::vector<RequestId> finish_requests(std::span<const RequestId> ids, RequestStatus status);

  // Ends every live sequence of a group (a request and its forks). Returns their ids.
  std::vector<RequestId> finish_group(RequestId group_id, RequestStatus status);

  SchedulerOutput schedule();
  // `out` must be the latest schedule() result and `runner_out` its execution.
  std::vector<RequestOutput> update(const SchedulerOutput& out, const ModelRunnerOutput& runner_out);

  bool has_unfinished() const { return !requests_.empty(); }
  int32_t num_running() const { return static_cast<int32_t>(running_.size()); }
  int32_t num_waiting() const { return static_cast<int32_t>(waiting_.size()); }
  // Running sequences plus the forks that unforked parents will make.
  int32_t num_running_seqs() const;
  // Running / waiting sequences of one priority class.
  int32_t num_running_of_class(int priority) const;
  int32_t num_waiting_of_class(int priority) const {
    return static_cast<int32_t>(waiting_.size_of_class(priority));
  }
  // The live request with this id, or nullptr.
  const Request* find(RequestId id) const;
  // Running ids in service order; waiting ids in admission order.
  std::vector<RequestId> running_ids() const;
  std::vector<RequestId> waiting_ids() const { return waiting_.ids(); }
  // Ids of every live sequence.
  std::vector<RequestId> live_ids() const;

  const KVCacheManager& kv_cache() const { return kv_; }
  const SchedulerCounters& counters() const { return counters_; }
  const SchedulerConfig& config() const { return cfg_; }

 private:
  void make_room_for_urgent(SchedulerOutput& out);
  // The step's budget: it reserves the missing tokens of the running short
  // work, then those of the short prompts admission reaches first while every
  // running long prompt keeps room for one shared chunk; it is shared when
  // any short work runs or is admissible (sequence slots) at the front.
  StepBudget plan_budget() const;
  bool schedule_running(SchedulerOutput& out, StepBudget& budget);
  void schedule_waiting(SchedulerOutput& out, StepBudget& budget);
  std::optional<AllocResult> allocate_or_preempt(Request& r, int32_t n, size_t index, SchedulerOutput& out);
  void preempt(size_t running_index, SchedulerOutput& out);
  // Adds r's chunk of n tokens to `out` and advances r.num_computed_tokens.
  void record(Request& r, int32_t n, AllocResult alloc, SchedulerOutput& out, bool first_admission,
              int32_t num_cached_tokens);
  void fork(Request& parent, const std::vector<SampledToken>& samples, std::vector<RequestOutput>& outputs);
  void append_token(Request& r, const SampledToken& t, std::vector<RequestOutput>& outputs);
  void insert_running(Request* r);
  void finish(Request& r, RequestStatus status);
  Request* find_mutable(RequestId id);

  SchedulerConfig cfg_;
  ChunkLimits limits_;                                               // cfg_'s thresholds, the auto one resolved
  KVCacheManager kv_;
  std::unordered_map<RequestId, std::unique_ptr<Request>> requests_;  // every live sequence
  std::vector<Request*> running_;                                    // service order
  WaitingQueue waiting_;
  std::vector<RequestId> finished_since_step_;                       // for the next SchedulerOutput
  uint64_t next_arrival_ = 0;
  SchedulerCounters counters_;
};

}  // namespace db
