// When a sequence ends, judged after each appended token. Stop strings are not
// seen here: they are matched on detokenized text by the engine's output side,
// which then finishes the sequence through Scheduler::finish_requests.
#pragma once
#include <cstdint>
#include <optional>
#include <span>

#include "sched/request.h"

namespace db {

struct StopDecision {
  RequestStatus status = RequestStatus::FinishedStopped;  // FinishedStopped or FinishedLength
  int32_t stop_token = -1;                                // the token that stopped it (FinishedStopped), else -1
};

// Checks the newest token, in this order: the request's stop token ids, EOS
// (unless ignore_eos), max_tokens output tokens, max_model_len tokens in all.
// nullopt: the sequence continues. No output yet: continues.
std::optional<StopDecision> check_stop(const Request& r, std::span<const int32_t> eos_token_ids,
                                       int64_t max_model_len);

}  // namespace db
