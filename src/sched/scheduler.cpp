// Scheduler: construction, request intake, the outline of a step (schedule()),
// limits and queries. The step's parts live in scheduler_*.cpp, one job each.

#include "sched/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "sched/request_order.h"
#include "util/error.h"

namespace db {

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

void Scheduler::insert_running(Request* r) {
  auto pos = std::upper_bound(running_.begin(), running_.end(), r,
                              [](const Request* a, const Request* b) { return runs_before(*a, *b); });
  running_.insert(pos, r);
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
