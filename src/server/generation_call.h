// One POST /v1/completions or /v1/chat/completions from body to response:
//   I/O thread: open it in the tracker (a vanished client aborts it) and queue it;
//   worker: parse + validate the JSON, check model, the tenant's priority class (tenant_priority.h),
//           admission (admission.h) and the tenant's quotas (tenant_quotas.h), tokenize, submit
//           one engine request per prompt (or answer an OpenAI error);
//   engine output thread: stream SSE chunks, or collect and answer once done.
#pragma once
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "api/api_error.h"
#include "api/openai_request.h"
#include "http/request.h"
#include "http/responder.h"
#include "server/server_context.h"
#include "server/stream_writer.h"

namespace db::server {

// The route handler: answers at once only when nothing needs the worker; never blocks.
void handle_generation(ServerContext& ctx, api::Endpoint endpoint, http::Request&& req,
                       std::shared_ptr<http::Responder> res);

class GenerationCall : public std::enable_shared_from_this<GenerationCall> {
 public:
  // `tenant`: who sent it (http::Request::principal; "" = nobody in particular).
  GenerationCall(ServerContext& ctx, api::Endpoint endpoint, std::string body, std::shared_ptr<http::Responder> res,
                 std::string tenant = "");
  // Keeps the body's share of the server's body budget until the body is parsed.
  void hold_body_lease(http::BodyLease lease) { body_lease_ = std::move(lease); }
  // Runs on a worker: everything up to the engine submission (answers errors itself).
  void run();

 private:
  using Clock = std::chrono::steady_clock;
  void start();  // throws api::ApiError
  void submit_parts(api::PreparedRequest& prepared);
  void on_output(size_t part, const SampleOutput& out, const RequestStats& stats, bool final);
  void record_metrics(size_t part, const SampleOutput& out, const RequestStats& stats, bool final);
  void answer_collected();
  void fail(const api::ApiError& e);
  void close();  // the call is over: gives back its quota slot and closes it in the tracker

  ServerContext& ctx_;
  api::Endpoint endpoint_;
  std::string body_;
  http::BodyLease body_lease_;  // body_'s bytes in the server's body budget; returned once parsed
  std::shared_ptr<http::Responder> res_;
  std::string tenant_;
  TenantQuotas::Slot quota_slot_;  // held from admission until the call is over
  std::shared_ptr<LiveRequest> live_;
  std::optional<api::ApiRequest> request_;
  api::ResponseMeta meta_;

  std::mutex mu_;                                     // guards what follows (outputs vs submission)
  std::unique_ptr<api::GenerationResult> collected_;  // non-streaming: the result so far
  std::unique_ptr<StreamWriter> stream_;              // streaming: the writer
  std::vector<int32_t> part_samples_;                 // per part: n
  std::vector<std::vector<std::optional<Clock::time_point>>> last_tokens_;  // per part, sample: last token arrival
  bool finished_ = false;  // answered (or failed); later outputs are ignored
};

}  // namespace db::server
