// Scheduler: speculative decoding, from the draft tokens a decode is given to the
// tokens its verification accepted.

#include "sched/scheduler.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sched/admission_reservation.h"
#include "util/error.h"

namespace db {

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

}  // namespace db
