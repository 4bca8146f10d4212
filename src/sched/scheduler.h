// Decides, every step, which sequences compute how many tokens in which KV
// blocks, and folds the sampled tokens back in. It owns the requests, the
// waiting queue and the KV cache manager; it never touches tensors.
//
// Admission (SchedulerConfig::admission):
//   Reserve (the default): a sequence's reservation is the blocks it will hold once it
//   has computed its tokens and min(its remaining outputs, decode_headroom_tokens) more
//   (each fork's tail for an unforked parent of n samples). A waiting request is
//   admitted only when the allocatable blocks cover its reservation (less the prefix
//   hits other sequences hold) plus what every running sequence's reservation still
//   lacks (admission_reservation.h counts both). Running sequences therefore grow into
//   blocks nobody else was admitted against; they preempt only when outputs outrun the
//   headroom. The victim is, in the least urgent class, the sequence with the fewest
//   computed tokens among those the step has not scheduled yet (preemption_policy.h). A
//   preempted sequence returns only when its whole reservation (prompt, outputs so far,
//   headroom) fits again, which takes blocks that only a finishing sequence gives back,
//   so sequences do not evict one another in turn.
//   FirstChunk: a waiting request is admitted when its first chunk's blocks are free;
//   the victim is the running sequence that runs last.
//
// schedule():
//   0. when the next waiting request does not fit (sequence slots, and blocks for
//      its first chunk or, under Reserve, its reservation; prefix hits not counted)
//      and the victim belongs to a less urgent class, that one is preempted, until
//      the request fits or no less urgent sequence runs.
//   The step budget is split by budget_split.h: short work (decodes, prompt
//   tails, and the short prompts at the front of the waiting queue) is
//   reserved first; long prompts get capped chunks of the rest, capped harder
//   when the step holds short work, so that step stays short. Caps count a
//   chunk's cost (prefill_cost.h): deep in a long prompt, where each token
//   attends to more context, a chunk holds fewer tokens.
//   1. running sequences, in service order (request_order.h): each computes a
//      chunk of its missing tokens (one for a decode) within the step budget;
//      a long prompt whose chunk the short work leaves no room for skips the step.
//      When its blocks cannot grow, the victim (see Admission) is
//      preempted by recompute (blocks freed, num_computed_tokens = 0, output
//      kept, back to the FRONT of its class in the waiting queue) until the
//      allocation fits or the sequence preempted itself.
//   2. unless step 1 preempted, waiting sequences in admission order
//      (waiting_queue.h): prefix-cache lookup, then allocation of their first
//      chunk (after the Reserve check); admission stops at the first one that
//      does not fit (reservation, blocks, sequence slots or budget).
//   A sequence whose chunk reaches its last known token samples in that step.
//
// Classes under pressure (all optional, see SchedulerConfig):
//   - watermarks: admitting or growing a class-c sequence must leave
//     kv_watermarks[c] of the usable pool allocatable; when it cannot, the
//     usual preemption applies (the running sequence that runs last goes).
//     A sequence that runs (or would run) alone is exempt, so none can wait
//     forever on a reserve; the memory cap never keeps a lone request out either.
//   - enforce_time_limits(now): ends requests past their deadline, and requests
//     that waited for admission past their class's max_queue_wait are promoted
//     one class (served ahead; the wait restarts in the new class) or ended.
//   - interactive steps: while a class-0 sequence runs or is about to be
//     admitted, and for interactive_hold_s after, less urgent running sequences
//     share interactive_step_tokens per step: decodes first, those whose last
//     step is oldest first, then prompt chunks in service order; the rest skip it.
//   - set_memory_limits(): the memory guard's cap on running sequences (the ones
//     that run last are preempted down to it), admission pause (while anything
//     runs) and its bound on new KV memory (never-used blocks; a sequence
//     running alone may pass it, so one sequence can always progress).
//
// Speculative decoding: set_draft_tokens() gives a decoding sequence guesses of
// its next tokens. Its next step computes them after its newest token, in the
// spare budget (what no short work is waiting for) and in KV slots allocated as
// lookahead (never prefix-cached while unverified); update() appends the tokens
// the runner's verification emitted and rolls num_computed_tokens back past the
// rejected drafts, whose slots stay allocated for the next steps to overwrite.
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
#include <string>
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

// Limits the memory guard sets (memory/memory_guard.h).
struct MemoryLimits {
  int32_t max_running = 0;        // running sequences at most (0 = the configured maximum)
  bool admission_paused = false;  // admit nothing while any sequence runs
  int64_t fresh_blocks = -1;      // never-used KV blocks (new resident memory) allocation may take
                                  // until the next call; -1 = no limit
};

// Settings the SLA controller (sched/sla_controller.h) lowers the configured ones to.
struct StepLimits {
  int32_t step_tokens = 0;             // tokens per step at most (0 = max_num_batched_tokens; never above it)
  int32_t long_prefill_threshold = 0;  // the long-chunk cap that goes with step_tokens (0 = none)
  int32_t max_running = 0;             // running sequences at most (0 = no further cap)
};

// A request enforce_time_limits() ended.
struct EndedRequest {
  RequestId group_id = 0;
  RequestStatus status = RequestStatus::FinishedTimeout;  // or FinishedQueueTimeout
  std::string message;                                    // what happened, for the caller
  std::vector<RequestId> sequences;                       // the group's sequences it ended
};

// Monotonic counters (for metrics).
struct SchedulerCounters {
  int64_t steps = 0;                   // schedule() calls that scheduled tokens
  int64_t prompt_tokens_computed = 0;  // scheduled tokens at prompt positions (recomputation included)
  int64_t output_tokens_recomputed = 0;  // scheduled tokens at output positions other than the newest
  int64_t cached_prompt_tokens = 0;    // prompt tokens adopted from the prefix cache at admissions
  int64_t generated_tokens = 0;        // tokens appended by update()
  int64_t preemptions = 0;             // sequences preempted
  int64_t finished = 0;                // sequences ended, whatever the reason
  int64_t timeouts = 0;                // requests ended by their deadline
  int64_t queue_timeouts = 0;          // requests ended for waiting past their class's limit
  int64_t promotions = 0;              // requests promoted for waiting past their class's limit
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

  // See "Classes under pressure" above. `now`: steady-clock seconds, the clock
  // of RequestParams::arrival_time and deadline.
  std::vector<EndedRequest> enforce_time_limits(double now);
  void set_memory_limits(const MemoryLimits& limits);
  const MemoryLimits& memory_limits() const { return mem_; }
  // The SLA controller's settings. A lowered cap stops admissions until the
  // running sequences fall under it; unlike the memory guard's, it preempts none.
  void set_step_limits(const StepLimits& limits);
  const StepLimits& step_limits() const { return step_; }
  // How capped chunks are priced from the next step on (see budget_split.h);
  // it changes only how prompts are split into steps, never what is computed.
  void set_prefill_cost(const PrefillCost& cost);
  const PrefillCost& prefill_cost() const { return cfg_.prefill_cost; }

  // Draft tokens for a running sequence whose only missing token is its newest
  // (a decode), replacing any it had; the next schedule() consumes them, cut to
  // the spare budget, the context and max_tokens. Ignored for other sequences.
  void set_draft_tokens(RequestId id, std::vector<int32_t> drafts);

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
  // KV blocks held by running sequences of one class (a block shared by forks counts per sequence).
  int64_t blocks_of_class(int priority) const;
  // Blocks a class-`priority` allocation must leave allocatable (its watermark).
  int32_t reserve_blocks(int priority) const;

  const KVCacheManager& kv_cache() const { return kv_; }
  const SchedulerCounters& counters() const { return counters_; }
  const SchedulerConfig& config() const { return cfg_; }

 private:
  void make_room_for_urgent(SchedulerOutput& out);
  // Reserve (see Admission); its block counts are admission_reservation.h's.
  bool reserving() const { return cfg_.admission == AdmissionPolicy::Reserve; }
  // Preempts the sequences that run last until the running ones fit the memory guard's cap.
  void enforce_running_cap(SchedulerOutput& out);
  // Running sequences allowed now: the configured maximum, lowered by the memory
  // guard and the SLA controller.
  int32_t max_running() const;
  bool admission_open() const { return !(mem_.admission_paused && !running_.empty()); }
  // Whether a sequence of num_samples may join the running ones (always, when none runs).
  bool fits_slots(int32_t num_samples) const;
  // Whether r runs, or would run, alone: then it is exempt from the reserve and
  // the bound on new KV memory, so a lone sequence always progresses.
  bool runs_alone(const Request& r) const;
  // reserve_blocks(r.priority), or 0 when r runs alone.
  int32_t reserve_for(const Request& r) const;
  // The step's budget: it reserves the missing tokens of the running short
  // work, then those of the short prompts admission reaches first while every
  // running long prompt keeps room for one shared chunk; it is shared when
  // any short work runs or is admissible (sequence slots) at the front.
  StepBudget plan_budget() const;
  bool schedule_running(SchedulerOutput& out, StepBudget& budget);
  // The less urgent running sequences allowed to compute in an interactive step
  // (empty set and false when the step is not interactive).
  bool interactive_step();
  std::vector<const Request*> interactive_allowance() const;
  void schedule_waiting(SchedulerOutput& out, StepBudget& budget);
  std::optional<AllocResult> allocate_or_preempt(Request& r, int32_t n, size_t index, SchedulerOutput& out);
  void preempt(size_t running_index, SchedulerOutput& out);
  // n tokens for r's next chunk, cut so that the prompt positions it scores fit in
  // scored_rows_left_ (only for a request with prompt logprobs still in its prompt).
  int32_t cap_scored_rows(const Request& r, int32_t n) const;
  // Adds r's chunk of n tokens to `out` and advances r.num_computed_tokens.
  // `drafts`: r's draft tokens scheduled after its newest token (counted in n).
  void record(Request& r, int32_t n, AllocResult alloc, SchedulerOutput& out, bool first_admission,
              int32_t num_cached_tokens, std::vector<int32_t> drafts = {});
  // How many of decoding sequence r's `drafts` draft tokens fit this step: at
  // most `room`, the context and r's max_tokens.
  int32_t usable_drafts(const Request& r, int32_t drafts, int32_t room) const;
  // Slots for r's newest token and `drafts` draft tokens after it, without
  // preempting anyone; nullopt (nothing changed) when they do not fit.
  std::optional<AllocResult> allocate_drafts(Request& r, int32_t n, int32_t drafts);
  // Appends the tokens verification emitted for r's drafts (stopping where r
  // finishes) and moves num_computed_tokens back past the rejected ones.
  void accept_verified(Request& r, const ScheduledRequest& s, const std::vector<SampledToken>& emitted,
                       std::vector<RequestOutput>& outputs);
  void fork(Request& parent, const std::vector<SampledToken>& samples, std::vector<RequestOutput>& outputs);
  // Appends tokens to r one by one, stopping at the first that finishes it, as one output.
  void append_tokens(Request& r, std::span<const SampledToken> tokens, std::vector<RequestOutput>& outputs);
  void insert_running(Request* r);
  void finish(Request& r, RequestStatus status);
  Request* find_mutable(RequestId id);

  SchedulerConfig cfg_;
  ChunkLimits limits_;                                               // the step's chunk caps (cfg_'s or step_'s), resolved
  int32_t step_tokens_ = 0;                                          // the step's token budget (cfg_'s or step_'s)
  KVCacheManager kv_;
  std::unordered_map<RequestId, std::unique_ptr<Request>> requests_;  // every live sequence
  std::vector<Request*> running_;                                    // service order
  WaitingQueue waiting_;
  std::vector<RequestId> finished_since_step_;                       // for the next SchedulerOutput
  uint64_t next_arrival_ = 0;
  SchedulerCounters counters_;
  MemoryLimits mem_;
  StepLimits step_;
  int64_t deadline_requests_ = 0;  // live sequences with a deadline (forks included)
  int32_t interactive_left_ = 0;  // this step: tokens less urgent sequences may still compute (max: no cap)
  int32_t scored_rows_left_ = 0;  // this step: prompt positions that may still be scored (max_scored_prompt_rows)
  double now_ = 0;                // the latest enforce_time_limits() time
  double interactive_until_ = -1; // steps stay interactive until this time (see interactive_hold_s)
};

}  // namespace db
