#include "server/admission.h"

#include <string>
#include <variant>

namespace db::server {

int64_t request_choices(const api::ApiRequest& req) {
  const int64_t n = api::common_fields(req).n;
  if (const auto* completion = std::get_if<api::CompletionRequest>(&req))
    return static_cast<int64_t>(completion->prompts.size()) * n;
  return n;
}

void check_admission(const ServerContext& ctx, const api::ApiRequest& req) {
  const int64_t choices = request_choices(req);
  const int64_t cap = ctx.config.max_choices_per_request;
  if (cap > 0 && choices > cap)
    throw api::ApiError("the request asks for " + std::to_string(choices) +
                            " completions (prompts x n); at most " + std::to_string(cap) +
                            " per request (--max-choices-per-request): split it, or use the Batch API",
                        "prompt", "too_many_choices");
  const int64_t limit = ctx.config.max_queued_requests;
  if (limit <= 0) return;
  // Background work (Batch API jobs, priority 2) waits by design and does not count against live traffic.
  const EngineStats stats = ctx.engine.stats();
  const int64_t waiting = stats.waiting_by_priority[0] + stats.waiting_by_priority[1] +
                          static_cast<int64_t>(ctx.prepare_queue.pending());
  if (waiting + choices > limit)
    throw api::ApiError("the server is at capacity (" + std::to_string(waiting) + " sequences waiting, this request adds " +
                            std::to_string(choices) + ", --max-queued-requests " + std::to_string(limit) +
                            "); retry later",
                        "", "rate_limit_exceeded", 429, "rate_limit_error");
}

}  // namespace db::server
