#include "sched/stop_check.h"

#include <algorithm>

namespace db {

std::optional<StopDecision> check_stop(const Request& r, std::span<const int32_t> eos_token_ids,
                                       int64_t max_model_len) {
  if (r.num_output_tokens() <= 0) return std::nullopt;
  const int32_t last = r.tokens.back();
  const auto contains = [last](std::span<const int32_t> ids) {
    return std::find(ids.begin(), ids.end(), last) != ids.end();
  };
  if (contains(r.stop_token_ids) || (!r.ignore_eos && contains(eos_token_ids)))
    return StopDecision{RequestStatus::FinishedStopped, last};
  if (r.num_output_tokens() >= r.max_tokens || (max_model_len > 0 && r.num_tokens() >= max_model_len))
    return StopDecision{RequestStatus::FinishedLength, -1};
  return std::nullopt;
}

}  // namespace db
