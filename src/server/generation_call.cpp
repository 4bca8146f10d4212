#include "server/generation_call.h"

#include <optional>
#include <string>

#include "api/request_body.h"
#include "api/timeout_error.h"
#include "server/admission.h"
#include "server/http_helpers.h"
#include "server/tenant_priority.h"
#include "util/error.h"
#include "util/unrecoverable.h"

namespace db::server {

namespace {

void check_model(const ServerContext& ctx, const std::string& model) {
  if (model.empty() || model == ctx.config.model_name) return;
  throw api::ApiError("the model '" + model + "' does not exist; this server serves '" + ctx.config.model_name + "'",
                      "model", "model_not_found", 404, "not_found_error");
}

// Parsed within limits derived from the context, so that a hostile body is refused
// before it costs much more memory than its own bytes.
api::ApiRequest parse_body(const ServerContext& ctx, api::Endpoint endpoint, const std::string& body) {
  return api::parse_request_body(endpoint, body, api::body_limits(ctx.config.max_context, ctx.bundle.tokenizer()));
}

}  // namespace

void handle_generation(ServerContext& ctx, api::Endpoint endpoint, http::Request&& req,
                       std::shared_ptr<http::Responder> res) {
  auto call =
      std::make_shared<GenerationCall>(ctx, endpoint, std::move(req.body), std::move(res), std::move(req.principal));
  call->hold_body_lease(std::move(req.body_lease));
  ctx.prepare_queue.post([call] { call->run(); });
}

GenerationCall::GenerationCall(ServerContext& ctx, api::Endpoint endpoint, std::string body,
                               std::shared_ptr<http::Responder> res, std::string tenant)
    : ctx_(ctx), endpoint_(endpoint), body_(std::move(body)), res_(std::move(res)), tenant_(std::move(tenant)) {
  live_ = ctx_.tracker.open(*res_);
}

void GenerationCall::run() {
  try {
    start();
  } catch (const api::ApiError& e) {
    fail(e);
  } catch (const std::exception& e) {
    fail(api::ApiError(std::string("internal error: ") + e.what(), "", "", 500, "server_error"));
  }
}

void GenerationCall::start() {
  if (live_->aborted()) {  // the client left while the request was queued
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
    ctx_.tracker.close(live_);
    return;
  }
  request_ = parse_body(ctx_, endpoint_, body_);
  body_.clear();
  body_.shrink_to_fit();
  body_lease_.reset();
  check_model(ctx_, api::common_fields(*request_).model);
  const int priority = tenant_priority(ctx_.tenants.find_by_name(tenant_), api::common_fields(*request_));
  check_admission(ctx_, *request_);
  quota_slot_ = ctx_.quotas.admit(tenant_);
  api::PreparedRequest prepared;
  try {
    prepared = api::prepare_request(*request_, ctx_.bundle, ctx_.config.max_context);
  } catch (const api::ApiError&) {
    throw;
  } catch (const Error& e) {
    throw api::ApiError(std::string("cannot prepare the prompt: ") + e.what(), "", "invalid_prompt");
  }
  meta_.id = api::new_response_id(endpoint_ == api::Endpoint::Completions ? "cmpl-" : "chatcmpl-");
  meta_.created = api::unix_time_now();
  meta_.model = ctx_.config.model_name;
  meta_.split_reasoning = endpoint_ == api::Endpoint::ChatCompletions && ctx_.bundle.splits_reasoning();
  meta_.tool_format = ctx_.bundle.tool_call_format();
  int64_t prompt_tokens = 0;
  for (EngineRequest& part : prepared.parts) {
    part.priority = priority;
    part.tenant = tenant_;
    prompt_tokens += static_cast<int64_t>(part.prompt.size());
    part_samples_.push_back(part.n);
    last_tokens_.emplace_back(static_cast<size_t>(part.n));
  }
  if (api::common_fields(*request_).stream)
    stream_ = std::make_unique<StreamWriter>(*request_, prepared, ctx_.bundle.tokenizer(), meta_, res_);
  else
    collected_ = std::make_unique<api::GenerationResult>(prepared);
  ctx_.quotas.charge(tenant_, prompt_tokens);
  submit_parts(prepared);
}

void GenerationCall::submit_parts(api::PreparedRequest& prepared) {
  std::lock_guard<std::mutex> lock(mu_);  // outputs wait until every part is in and the stream has begun
  for (size_t part = 0; part < prepared.parts.size(); ++part) {
    auto self = shared_from_this();
    try {
      const RequestId id = ctx_.engine.submit(std::move(prepared.parts[part]),
                                              [self, part](RequestId, const SampleOutput& out, const RequestStats& st,
                                                           bool final) { self->on_output(part, out, st, final); });
      ctx_.tracker.add_engine_request(*live_, id);
    } catch (const Error& e) {
      finished_ = true;
      ctx_.tracker.abort(*live_);
      close();
      send_error(*res_,
                 api::ApiError(std::string("the engine refused the request: ") + e.what(), "", "invalid_request"));
      return;
    }
  }
  if (stream_) stream_->begin();
}

void GenerationCall::record_metrics(size_t part, const SampleOutput& out, const RequestStats& stats, bool final) {
  if (out.finish != FinishReason::None) ctx_.metrics.on_sample_finished(out.finish);
  if (!out.new_token_ids.empty() && out.index >= 0 && static_cast<size_t>(out.index) < last_tokens_[part].size()) {
    auto& last = last_tokens_[part][static_cast<size_t>(out.index)];
    const Clock::time_point now = Clock::now();
    if (last) ctx_.metrics.on_tokens(std::chrono::duration<double>(now - *last).count(), out.new_token_ids.size());
    last = now;
  }
  if (final) ctx_.metrics.on_request_finished(stats, part_samples_[part]);
}

void GenerationCall::on_output(size_t part, const SampleOutput& out, const RequestStats& stats, bool final) {
  if (final) ctx_.quotas.charge(tenant_, stats.generated_tokens);  // also for parts that end after an error
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  try {
    record_metrics(part, out, stats, final);
    const bool done = stream_ ? stream_->add(part, out, stats, final) : collected_->add(part, out, stats, final);
    if (!done) return;
    finished_ = true;
    if (collected_) answer_collected();
  } catch (const std::exception& e) {  // an invariant broke: answer once, abort the rest
    finished_ = true;
    ctx_.tracker.abort(*live_);
    if (stream_)
      res_->end();
    else
      send_json(*res_, 500, api::error_body(std::string("internal error: ") + e.what()));
  }
  close();
}

void GenerationCall::answer_collected() {
  const api::GenerationResult& r = *collected_;
  if (!r.failed()) {
    send_json(*res_, 200, api::build_response(*request_, r, ctx_.bundle.tokenizer(), meta_));
    return;
  }
  if (std::optional<api::ApiError> timed_out = api::timeout_error(r, api::common_fields(*request_).timeout)) {
    send_error(*res_, *timed_out);  // 408, or 503 with Retry-After for a queue timeout
    return;
  }
  bool aborted = false;
  for (const api::ChoiceOutput& c : r.choices()) aborted = aborted || c.finish == FinishReason::Abort;
  if (aborted)
    send_error(*res_, api::ApiError("the request was aborted (the server is shutting down)", "", "aborted", 503,
                                    "server_error"));
  else if (const std::optional<std::string> why = unrecoverable_reason())
    send_error(*res_, model_unavailable_error(*why));  // the step failed because the model is gone
  else
    send_error(*res_, api::ApiError("generation failed: " + r.failure_message(), "", "generation_failed", 500,
                                    "server_error"));
}

void GenerationCall::fail(const api::ApiError& e) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  send_error(*res_, e);
  close();
}

void GenerationCall::close() {
  quota_slot_.release();
  ctx_.tracker.close(live_);
}

}  // namespace db::server
