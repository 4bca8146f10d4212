#include "sched/scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <string>

#include "sched/admission_reservation.h"
#include "sched/budget_split.h"
#include "sched/preemption_policy.h"
#include "sched/request_order.h"
#include "sched/stop_check.h"
#include "util/error.h"

namespace db {

namespace {
std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}
// The runner scores the prompt of a group's first sequence only (forks share its prompt).
bool scores_prompt(const Request& r) { return r.sampling.prompt_logprobs.has_value() && r.id == r.group_id; }

}  // namespace

Scheduler::Scheduler(SchedulerConfig cfg)
    : cfg_(std::move(cfg)), kv_(cfg_.block_size, cfg_.num_blocks, cfg_.enable_prefix_caching) {
  DB_CHECK(cfg_.max_num_seqs >= 1, "max_num_seqs must be at least 1");
  DB_CHECK(cfg_.max_num_batched_tokens >= 1, "max_num_batched_tokens must be at least 1");
  DB_CHECK(cfg_.long_prefill_threshold >= 0, "long_prefill_threshold must not be negative");
  DB_CHECK(cfg_.shared_prefill_threshold >= 0, "shared_prefill_threshold must not be negative");
  DB_CHECK(cfg_.prefill_cost.attention_per_position >= 0, "the prefill cost per position must not be negative");
  DB_CHECK(cfg_.decode_headroom_tokens >= 1, "decode_headroom_tokens must be at least 1");
  limits_ = resolve_chunk_limits(cfg_.long_prefill_threshold, cfg_.shared_prefill_threshold, cfg_.block_size);
  step_tokens_ = cfg_.max_num_batched_tokens;
  for (size_t c = 0; c < cfg_.kv_watermarks.size(); ++c) {
    const double w = cfg_.kv_watermarks[c];
    DB_CHECK(w >= 0 && w < 1, "KV watermarks must lie in [0, 1)");
    DB_CHECK(c == 0 || w >= cfg_.kv_watermarks[c - 1], "KV watermarks must not decrease from class 0 to class 2");
    DB_CHECK(cfg_.max_queue_wait[c] >= 0, "max queue waits must not be negative");
  }
}

void Scheduler::add_request(const RequestParams& p) {
  DB_CHECK(p.num_samples >= 1, "a request needs at least one sample");
  DB_CHECK(!p.prompt.empty(), "a request needs a prompt");
  for (int32_t i = 0; i < p.num_samples; ++i)
    DB_CHECK(!requests_.count(p.id + RequestId(i)), "sequence id " + std::to_string(p.id + RequestId(i)) + " is in use");
  auto r = std::make_unique<Request>(make_request(p, next_arrival_++));
  if (r->deadline > 0) ++deadline_requests_;
  waiting_.push_back(r.get());
  requests_.emplace(p.id, std::move(r));
}

std::vector<RequestId> Scheduler::finish_requests(std::span<const RequestId> ids, RequestStatus status) {
  DB_CHECK(is_finished(status), "finish_requests needs a finished status");
  std::vector<RequestId> done;
  for (RequestId id : ids) {
    Request* r = find_mutable(id);
    if (!r) continue;
    finish(*r, status);
    done.push_back(id);
  }
  return done;
}

std::vector<RequestId> Scheduler::finish_group(RequestId group_id, RequestStatus status) {
  std::vector<RequestId> ids;
  for (const auto& [id, r] : requests_)
    if (r->group_id == group_id) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return finish_requests(ids, status);
}

SchedulerOutput Scheduler::schedule() {
  SchedulerOutput out;
  out.finished_ids.swap(finished_since_step_);
  enforce_running_cap(out);
  if (cfg_.priority_preemption && admission_open()) make_room_for_urgent(out);
  StepBudget budget = plan_budget();
  interactive_left_ = interactive_step() ? cfg_.interactive_step_tokens : std::numeric_limits<int32_t>::max();
  scored_rows_left_ = cfg_.max_scored_prompt_rows;
  const bool preempted = schedule_running(out, budget);
  if (!preempted && admission_open()) schedule_waiting(out, budget);
  if (out.has_work()) ++counters_.steps;
  return out;
}

void Scheduler::make_room_for_urgent(SchedulerOutput& out) {
  if (waiting_.empty()) return;
  const Request& w = *waiting_.front();
  const int32_t first_chunk = chunk_tokens(w.num_tokens(), step_tokens_, limits_.long_threshold);
  const int64_t blocks =
      reserving() ? committed_blocks(w, cfg_) : (first_chunk + cfg_.block_size - 1) / cfg_.block_size;
  while (!running_.empty()) {
    const int64_t others = reserving() ? outstanding_blocks(running_, cfg_, kv_) : 0;
    const bool fits = fits_slots(w.num_samples) &&
                      kv_.num_allocatable_blocks(runs_alone(w)) >= blocks + others + reserve_for(w);
    const size_t victim = choose_victim(cfg_.admission, running_);
    if (fits || !may_preempt_for_admission(w, *running_[victim])) return;
    preempt(victim, out);
  }
}

void Scheduler::enforce_running_cap(SchedulerOutput& out) {
  const int32_t cap = mem_.max_running > 0 ? std::min(mem_.max_running, cfg_.max_num_seqs) : cfg_.max_num_seqs;
  while (running_.size() > 1 && num_running_seqs() > cap) preempt(choose_victim(cfg_.admission, running_), out);
}

int32_t Scheduler::max_running() const {
  int32_t cap = cfg_.max_num_seqs;
  if (mem_.max_running > 0) cap = std::min(cap, mem_.max_running);
  if (step_.max_running > 0) cap = std::min(cap, step_.max_running);
  return cap;
}

void Scheduler::set_step_limits(const StepLimits& limits) {
  DB_CHECK(limits.step_tokens >= 0 && limits.max_running >= 0, "step limits must not be negative");
  step_ = limits;
  step_tokens_ = limits.step_tokens > 0 ? std::min(limits.step_tokens, cfg_.max_num_batched_tokens)
                                        : cfg_.max_num_batched_tokens;
  limits_ = limits.step_tokens > 0
                ? resolve_chunk_limits(limits.long_prefill_threshold, cfg_.shared_prefill_threshold, cfg_.block_size)
                : resolve_chunk_limits(cfg_.long_prefill_threshold, cfg_.shared_prefill_threshold, cfg_.block_size);
}

void Scheduler::set_prefill_cost(const PrefillCost& cost) {
  DB_CHECK(cost.attention_per_position >= 0, "the prefill cost per position must not be negative");
  cfg_.prefill_cost = cost;
}

void Scheduler::set_memory_limits(const MemoryLimits& limits) {
  DB_CHECK(limits.max_running >= 0, "the memory guard's cap must not be negative");
  mem_ = limits;
  kv_.set_fresh_block_allowance(limits.fresh_blocks);
}

bool Scheduler::fits_slots(int32_t num_samples) const {
  return running_.empty() || num_running_seqs() + num_samples <= max_running();
}

bool Scheduler::runs_alone(const Request& r) const {
  return running_.empty() || (running_.size() == 1 && running_[0] == &r);
}

int32_t Scheduler::reserve_for(const Request& r) const { return runs_alone(r) ? 0 : reserve_blocks(r.priority); }

int32_t Scheduler::reserve_blocks(int priority) const {
  const double w = cfg_.kv_watermarks[static_cast<size_t>(std::clamp(priority, 0, 2))];
  return static_cast<int32_t>(std::ceil(w * double(kv_.pool().num_blocks() - 1)));
}

std::vector<EndedRequest> Scheduler::enforce_time_limits(double now) {
  now_ = now;
  std::vector<EndedRequest> ended;
  const bool queue_limits = std::any_of(cfg_.max_queue_wait.begin(), cfg_.max_queue_wait.end(),
                                        [](double w) { return w > 0; });
  if (!queue_limits && deadline_requests_ == 0) return ended;  // nothing to check: skip the scan
  std::vector<Request*> promote;
  std::set<RequestId> expired;  // groups past their deadline (a fork carries it too, its parent may be gone)
  for (const auto& [id, r] : requests_) {
    if (r->deadline > 0 && now >= r->deadline) {
      if (expired.insert(r->group_id).second)
        ended.push_back({r->group_id, RequestStatus::FinishedTimeout,
                         "the request's deadline of " + format_seconds(r->deadline - r->arrival_time) + " passed"});
      continue;
    }
    if (r->id != r->group_id) continue;  // forks never wait unadmitted
    const double limit = cfg_.max_queue_wait[static_cast<size_t>(std::clamp(r->priority, 0, 2))];
    if (r->status != RequestStatus::Waiting || limit <= 0 || now - r->class_entry_time < limit) continue;
    if (cfg_.reject_on_queue_timeout) {
      ended.push_back({r->group_id, RequestStatus::FinishedQueueTimeout,
                       "the request waited " + format_seconds(now - r->class_entry_time) +
                           " in the queue of priority class " + std::to_string(r->priority) + " (limit " +
                           format_seconds(limit) + ")"});
    } else if (r->priority > 0) {
      promote.push_back(r.get());
    }
  }
  std::sort(promote.begin(), promote.end(), [](const Request* a, const Request* b) { return runs_before(*a, *b); });
  for (Request* r : promote) {  // oldest first, so they keep their order in the class above
    waiting_.remove(r->id);
    --r->priority;
    r->class_entry_time = now;
    waiting_.push_back(r);
    ++counters_.promotions;
  }
  std::sort(ended.begin(), ended.end(), [](const EndedRequest& a, const EndedRequest& b) { return a.group_id < b.group_id; });
  for (EndedRequest& e : ended) {
    e.sequences = finish_group(e.group_id, e.status);
    ++(e.status == RequestStatus::FinishedTimeout ? counters_.timeouts : counters_.queue_timeouts);
  }
  return ended;
}

StepBudget Scheduler::plan_budget() const {
  int32_t running_short = 0, running_long = 0;
  for (const Request* r : running_) {
    const int32_t uncomputed = r->num_uncomputed_tokens();
    if (StepBudget::is_short(uncomputed, r->num_computed_tokens, limits_, cfg_.prefill_cost)) {
      running_short += uncomputed;
    } else {
      ++running_long;
    }
  }
  const int32_t room = step_tokens_ - running_short - running_long * limits_.shared_threshold;
  int32_t waiting_short = 0, seqs = num_running_seqs();
  bool short_waiting = false;
  waiting_.visit_in_order([&](const Request& w) {
    if (!StepBudget::is_short(w.num_tokens(), 0, limits_, cfg_.prefill_cost) ||
        (seqs > 0 && seqs + w.num_samples > max_running()))
      return false;
    short_waiting = true;
    if (waiting_short + w.num_tokens() > room) return false;
    waiting_short += w.num_tokens();
    seqs += w.num_samples;
    return true;
  });
  return StepBudget(step_tokens_, limits_, running_short + waiting_short, running_short > 0 || short_waiting,
                    cfg_.prefill_cost);
}

bool Scheduler::interactive_step() {
  if (cfg_.interactive_step_tokens <= 0) return false;
  const bool urgent_work = (!running_.empty() && running_.front()->priority == 0) ||
                           (!waiting_.empty() && waiting_.front()->priority == 0 && admission_open());
  if (urgent_work) interactive_until_ = now_ + cfg_.interactive_hold_s;
  return urgent_work || now_ < interactive_until_;
}

std::vector<const Request*> Scheduler::interactive_allowance() const {
  // Decodes first, the one that waited longest first (so none starves while the
  // cap lasts); then prompt chunks in service order (first come first served, so
  // prompts finish, and fill prefix-cache blocks, one after another).
  std::vector<const Request*> lower, prompts;
  for (const Request* r : running_)
    if (r->priority > 0) (r->num_uncomputed_tokens() == 1 ? lower : prompts).push_back(r);
  std::stable_sort(lower.begin(), lower.end(),
                   [](const Request* a, const Request* b) { return a->last_step < b->last_step; });
  lower.insert(lower.end(), prompts.begin(), prompts.end());
  std::vector<const Request*> allowed;
  int32_t tokens = 0;
  for (const Request* r : lower) {
    const int32_t t = std::min(r->num_uncomputed_tokens(), cfg_.interactive_step_tokens);
    if (tokens + t > cfg_.interactive_step_tokens) break;
    tokens += t;
    allowed.push_back(r);
  }
  return allowed;
}

bool Scheduler::schedule_running(SchedulerOutput& out, StepBudget& budget) {
  const size_t preempted_before = out.preempted_ids.size();
  const bool interactive = interactive_left_ < std::numeric_limits<int32_t>::max();
  const std::vector<const Request*> allowed = interactive ? interactive_allowance() : std::vector<const Request*>{};
  for (size_t i = 0; i < running_.size() && budget.left() > 0;) {
    Request& r = *running_[i];
    const int32_t uncomputed = r.num_uncomputed_tokens();
    DB_CHECK(uncomputed > 0, "running sequence " + std::to_string(r.id) + " has no token to compute");
    if (interactive && r.priority > 0 && std::find(allowed.begin(), allowed.end(), &r) == allowed.end()) {
      ++i;  // sits out this interactive step
      continue;
    }
    const int32_t offered = budget.offer(uncomputed, r.num_computed_tokens);
    const int32_t n = cap_scored_rows(r, r.priority > 0 ? std::min(offered, interactive_left_) : offered);
    if (n == 0) {  // a long prompt behind short work that takes the rest of the budget (or of the scored rows)
      ++i;
      continue;
    }
    const StepBudget budget_before = budget;
    const int32_t interactive_before = interactive_left_;
    if (r.priority > 0 && interactive) interactive_left_ -= n;
    budget.take(uncomputed, r.num_computed_tokens, n);
    std::vector<int32_t> drafts = std::move(r.draft_tokens);
    r.draft_tokens.clear();
    std::optional<AllocResult> alloc;
    if (!drafts.empty() && uncomputed == 1) {
      const bool capped = r.priority > 0 && interactive;
      drafts.resize(static_cast<size_t>(usable_drafts(r, static_cast<int32_t>(drafts.size()),
                                                      capped ? std::min(budget.spare(), interactive_left_)
                                                             : budget.spare())));
      if (!drafts.empty()) alloc = allocate_drafts(r, n, static_cast<int32_t>(drafts.size()));
      if (!alloc) drafts.clear();  // drafts never preempt anyone: without room, a plain decode
      const auto k = static_cast<int32_t>(drafts.size());
      budget.take_spare(k);
      if (capped) interactive_left_ -= k;
    } else {
      drafts.clear();
    }
    if (!alloc) alloc = allocate_or_preempt(r, n, i, out);
    if (!alloc) {  // r preempted itself; running_[i] is now the sequence after it, which gets r's tokens
      budget = budget_before;
      interactive_left_ = interactive_before;
      continue;
    }
    const auto k = static_cast<int32_t>(drafts.size());
    record(r, n + k, std::move(*alloc), out, false, 0, std::move(drafts));
    ++i;
  }
  return out.preempted_ids.size() > preempted_before;
}

std::optional<AllocResult> Scheduler::allocate_drafts(Request& r, int32_t n, int32_t drafts) {
  SlotRequest slots;
  slots.tokens = r.tokens;
  slots.num_computed_tokens = r.num_computed_tokens;
  slots.num_new_tokens = n;
  slots.num_lookahead_tokens = drafts;
  slots.reserve_blocks = reserve_for(r);
  // Unverified drafts never take blocks the other running sequences are admitted against.
  if (reserving())
    slots.reserve_blocks += static_cast<int32_t>(std::min<int64_t>(
        outstanding_blocks(running_, cfg_, kv_) - lacking_blocks(r, cfg_, kv_), kv_.pool().num_blocks()));
  slots.exempt = runs_alone(r);
  return kv_.allocate_slots(r.id, slots);
}

std::optional<AllocResult> Scheduler::allocate_or_preempt(Request& r, int32_t n, size_t index,
                                                          SchedulerOutput& out) {
  SlotRequest slots;
  slots.tokens = r.tokens;
  slots.num_computed_tokens = r.num_computed_tokens;
  slots.num_new_tokens = n;
  slots.reserve_blocks = reserve_for(r);
  for (;;) {
    slots.exempt = runs_alone(r);  // preempting others may leave r alone
    std::optional<AllocResult> alloc = kv_.allocate_slots(r.id, slots);
    if (alloc) return alloc;
    // Reserve chooses among the sequences this step has not scheduled yet (r
    // included); FirstChunk's victim, the one that runs last, always is one of them.
    const std::span<Request* const> unscheduled(running_.data() + index, running_.size() - index);
    const size_t victim = reserving() ? index + choose_least_recompute_victim(unscheduled)
                                      : choose_preemption_victim(running_);
    DB_CHECK(victim >= index, "the preemption victim was already scheduled in this step");
    const bool self = running_[victim] == &r;
    preempt(victim, out);
    if (self) return std::nullopt;
  }
}

void Scheduler::preempt(size_t running_index, SchedulerOutput& out) {
  Request& r = *running_[running_index];
  kv_.free(r.id);
  r.num_computed_tokens = 0;
  r.draft_tokens.clear();
  r.status = RequestStatus::Preempted;
  r.runner_knows = false;
  ++r.num_preemptions;
  ++counters_.preemptions;
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(running_index));
  waiting_.push_front(&r);
  out.preempted_ids.push_back(r.id);
}

void Scheduler::schedule_waiting(SchedulerOutput& out, StepBudget& budget) {
  budget.drop_reservation();  // admission is FIFO: the reserved short prompts come first
  int64_t outstanding = reserving() ? outstanding_blocks(running_, cfg_, kv_) : 0;
  while (!waiting_.empty() && budget.left() > 0) {
    Request& r = *waiting_.front();
    if (!fits_slots(r.num_samples)) break;
    if (r.priority > 0 && interactive_left_ == 0) break;  // an interactive step has no room left for it
    // Prompt logprobs need every prompt position computed: no prefix-cache hit.
    const ComputedBlocks hit =
        r.sampling.prompt_logprobs ? ComputedBlocks{} : kv_.get_computed_blocks(r.id, r.tokens);
    const int32_t uncomputed = r.num_tokens() - hit.num_computed_tokens;
    const int32_t offer = budget.offer(uncomputed, hit.num_computed_tokens);
    const int32_t offered = r.priority > 0 ? std::min(offer, interactive_left_) : offer;
    const int32_t n = cap_scored_rows(r, offered);
    if (n == 0 && offered > 0) break;  // the step scores as many prompt positions as it may; wait for the next
    SlotRequest slots;
    slots.tokens = r.tokens;
    slots.num_new_tokens = n;
    slots.prefix_hit = &hit;
    slots.reserve_blocks = reserve_for(r);
    slots.exempt = runs_alone(r);
    if (reserving() && !runs_alone(r) &&
        kv_.num_allocatable_blocks() < admission_blocks(r, hit, cfg_, kv_) + outstanding + slots.reserve_blocks)
      break;  // its reservation does not fit beside the running sequences' (a lone one is exempt)
    std::optional<AllocResult> alloc = kv_.allocate_slots(r.id, slots);
    if (!alloc) break;
    waiting_.pop_front();
    const bool first = r.status == RequestStatus::Waiting;
    if (first) r.num_cached_tokens = hit.num_computed_tokens;
    counters_.cached_prompt_tokens += std::min(hit.num_computed_tokens, r.num_prompt_tokens);
    r.num_computed_tokens = hit.num_computed_tokens;
    r.status = RequestStatus::Running;
    insert_running(&r);
    record(r, n, std::move(*alloc), out, first, hit.num_computed_tokens);
    if (reserving()) outstanding += lacking_blocks(r, cfg_, kv_);
    budget.take(uncomputed, hit.num_computed_tokens, n);
    if (r.priority > 0 && interactive_left_ != std::numeric_limits<int32_t>::max()) interactive_left_ -= n;
  }
}

int32_t Scheduler::cap_scored_rows(const Request& r, int32_t n) const {
  if (!scores_prompt(r) || r.num_computed_tokens >= r.num_prompt_tokens) return n;
  return std::min(n, scored_rows_left_);
}

void Scheduler::set_draft_tokens(RequestId id, std::vector<int32_t> drafts) {
  Request* r = find_mutable(id);
  if (!r || r->status != RequestStatus::Running || r->num_uncomputed_tokens() != 1 || r->num_samples != 1) return;
  r->draft_tokens = std::move(drafts);
}

int32_t Scheduler::usable_drafts(const Request& r, int32_t drafts, int32_t room) const {
  int64_t k = std::min(drafts, room);
  // The step emits up to k + 1 tokens; more than max_tokens or the context allows are wasted.
  k = std::min<int64_t>(k, r.max_tokens - r.num_output_tokens() - 1);
  if (cfg_.max_model_len > 0) k = std::min<int64_t>(k, cfg_.max_model_len - r.num_tokens());
  return static_cast<int32_t>(std::max<int64_t>(k, 0));
}

void Scheduler::record(Request& r, int32_t n, AllocResult alloc, SchedulerOutput& out, bool first_admission,
                       int32_t num_cached_tokens, std::vector<int32_t> drafts) {
  if (scores_prompt(r))
    scored_rows_left_ -= std::max(0, std::min(r.num_computed_tokens + n, r.num_prompt_tokens) - r.num_computed_tokens);
  ScheduledRequest s;
  s.id = r.id;
  s.num_computed_tokens = r.num_computed_tokens;
  s.num_scheduled_tokens = n;
  const int32_t num_drafts = static_cast<int32_t>(drafts.size());
  s.num_samples = r.num_computed_tokens + n - num_drafts == r.num_tokens() ? r.num_samples : 0;
  s.draft_tokens = std::move(drafts);
  s.block_ids = kv_.block_table(r.id);
  s.new_block_ids = std::move(alloc.new_blocks);
  out.block_copies.insert(out.block_copies.end(), alloc.copies.begin(), alloc.copies.end());

  const int32_t begin = r.num_computed_tokens, end = begin + n;
  counters_.prompt_tokens_computed += std::max(0, std::min(end, r.num_prompt_tokens) - begin);
  counters_.output_tokens_recomputed +=
      std::max(0, std::min(end - num_drafts, r.num_tokens() - 1) - std::max(begin, r.num_prompt_tokens));

  if (!r.runner_knows) {
    NewRequestData d;
    d.tokens = r.tokens;
    d.num_prompt_tokens = r.num_prompt_tokens;
    d.sampling = r.sampling;
    d.sampler_state = r.sampler_state;
    d.group_id = r.group_id;
    d.first_admission = first_admission;
    d.num_cached_tokens = num_cached_tokens;
    s.new_data = std::move(d);
    out.scheduled_new.push_back(std::move(s));
  } else {
    out.scheduled_running.push_back(std::move(s));
  }
  r.runner_knows = true;
  r.num_computed_tokens = end;
  r.last_step = counters_.steps;
  out.total_num_scheduled_tokens += n;
}

std::vector<RequestOutput> Scheduler::update(const SchedulerOutput& out, const ModelRunnerOutput& runner_out) {
  std::unordered_map<RequestId, const RequestSamples*> samples_of;
  for (const RequestSamples& rs : runner_out.requests) samples_of[rs.id] = &rs;
  std::vector<RequestOutput> outputs;
  const auto handle = [&](const ScheduledRequest& s) {
    if (s.num_samples == 0) return;
    Request* r = find_mutable(s.id);
    if (!r) return;  // finished after it was scheduled
    auto it = samples_of.find(s.id);
    DB_CHECK(it != samples_of.end(), "the runner returned no sample for sequence " + std::to_string(s.id));
    const std::vector<SampledToken>& samples = it->second->samples;
    if (!s.draft_tokens.empty()) {
      accept_verified(*r, s, samples, outputs);
      return;
    }
    DB_CHECK(static_cast<int32_t>(samples.size()) == s.num_samples && s.num_samples == r->num_samples,
             "sequence " + std::to_string(s.id) + " expected " + std::to_string(s.num_samples) + " samples, got " +
                 std::to_string(samples.size()));
    if (samples.size() > 1) {
      fork(*r, samples, outputs);
    } else {
      append_tokens(*r, {&samples[0], 1}, outputs);
    }
  };
  for (const ScheduledRequest& s : out.scheduled_running) handle(s);
  for (const ScheduledRequest& s : out.scheduled_new) handle(s);
  return outputs;
}

void Scheduler::accept_verified(Request& r, const ScheduledRequest& s, const std::vector<SampledToken>& emitted,
                                std::vector<RequestOutput>& outputs) {
  const auto drafts = static_cast<int32_t>(s.draft_tokens.size());
  const auto n = static_cast<int32_t>(emitted.size());
  DB_CHECK(n >= 1 && n <= drafts + 1, "sequence " + std::to_string(s.id) + ": verification of " +
                                          std::to_string(drafts) + " drafts emitted " + std::to_string(n) + " tokens");
  for (int32_t i = 0; i + 1 < n; ++i)
    DB_CHECK(emitted[static_cast<size_t>(i)].token == s.draft_tokens[static_cast<size_t>(i)],
             "sequence " + std::to_string(s.id) + ": an accepted token differs from its draft");
  // KV holds the newest token and the n - 1 accepted drafts; the rest is rolled back.
  r.num_computed_tokens -= drafts - (n - 1);
  append_tokens(r, emitted, outputs);
}

void Scheduler::fork(Request& parent, const std::vector<SampledToken>& samples, std::vector<RequestOutput>& outputs) {
  std::vector<Request*> children;
  for (size_t i = 1; i < samples.size(); ++i) {
    const RequestId cid = parent.id + RequestId(i);
    DB_CHECK(!requests_.count(cid), "fork: sequence id " + std::to_string(cid) + " is in use");
    auto child = std::make_unique<Request>(parent);
    child->id = cid;
    child->sample_index = parent.sample_index + static_cast<int32_t>(i);
    child->num_samples = 1;
    child->sampler_state.stream = parent.sampler_state.stream + static_cast<uint32_t>(i);
    child->runner_knows = false;
    if (child->deadline > 0) ++deadline_requests_;
    kv_.fork(parent.id, cid);
    children.push_back(child.get());
    insert_running(child.get());
    requests_.emplace(cid, std::move(child));
  }
  parent.num_samples = 1;
  append_tokens(parent, {&samples[0], 1}, outputs);  // may finish (and free) the parent; children hold their blocks
  for (size_t i = 1; i < samples.size(); ++i) append_tokens(*children[i - 1], {&samples[i], 1}, outputs);
}

void Scheduler::append_tokens(Request& r, std::span<const SampledToken> tokens, std::vector<RequestOutput>& outputs) {
  RequestOutput o;
  o.id = r.id;
  o.group_id = r.group_id;
  o.sample_index = r.sample_index;
  std::optional<StopDecision> stop;
  for (const SampledToken& t : tokens) {
    r.tokens.push_back(t.token);
    ++counters_.generated_tokens;
    o.new_tokens.push_back(t);
    stop = check_stop(r, cfg_.eos_token_ids, cfg_.max_model_len);
    if (stop) break;
  }
  if (stop) {
    o.status = stop->status;
    o.stop_token = stop->stop_token;
    r.stop_token = stop->stop_token;
  }
  outputs.push_back(std::move(o));
  if (stop) finish(r, stop->status);
}

void Scheduler::insert_running(Request* r) {
  auto pos = std::upper_bound(running_.begin(), running_.end(), r,
                              [](const Request* a, const Request* b) { return runs_before(*a, *b); });
  running_.insert(pos, r);
}

void Scheduler::finish(Request& r, RequestStatus status) {
  if (r.status == RequestStatus::Running) {
    running_.erase(std::find(running_.begin(), running_.end(), &r));
  } else {
    waiting_.remove(r.id);
  }
  kv_.free(r.id);
  r.status = status;
  ++counters_.finished;
  if (r.runner_knows) finished_since_step_.push_back(r.id);
  if (r.deadline > 0) --deadline_requests_;
  requests_.erase(r.id);
}

int32_t Scheduler::num_running_seqs() const {
  int32_t n = 0;
  for (const Request* r : running_) n += r->num_samples;
  return n;
}

int64_t Scheduler::blocks_of_class(int priority) const {
  int64_t n = 0;
  for (const Request* r : running_)
    if (r->priority == priority) n += static_cast<int64_t>(kv_.block_table(r->id).size());
  return n;
}

int32_t Scheduler::num_running_of_class(int priority) const {
  int32_t n = 0;
  for (const Request* r : running_) n += r->priority == priority;
  return n;
}

Request* Scheduler::find_mutable(RequestId id) {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : it->second.get();
}

const Request* Scheduler::find(RequestId id) const {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : it->second.get();
}

std::vector<RequestId> Scheduler::running_ids() const {
  std::vector<RequestId> ids;
  ids.reserve(running_.size());
  for (const Request* r : running_) ids.push_back(r->id);
  return ids;
}

std::vector<RequestId> Scheduler::live_ids() const {
  std::vector<RequestId> ids;
  ids.reserve(requests_.size());
  for (const auto& [id, r] : requests_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace db
