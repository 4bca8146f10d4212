#include "server/server_metrics.h"

#include <algorithm>
#include <vector>

#include "server/metric_names.h"

namespace db::server {

namespace {


std::vector<double> ttft_buckets() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
          1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
}
std::vector<double> token_latency_buckets() {
  return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
}
std::vector<double> request_latency_buckets() {
  return {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
          30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
}

std::vector<double> step_time_buckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0};
}
// Powers of two up to 8192 (tokens or sequences in one step).
std::vector<double> step_size_buckets() {
  std::vector<double> out;
  for (double b = 1; b <= 8192; b *= 2) out.push_back(b);
  return out;
}

// Powers of ten times 1, 2 and 5 up to a million tokens (vLLM's convention for token counts).
std::vector<double> token_count_buckets() {
  std::vector<double> out;
  for (double decade = 1; decade <= 1e6; decade *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if (m * decade <= 1e6) out.push_back(m * decade);
  return out;
}

}  // namespace

metrics::Names ServerMetrics::names(const std::string& deepbatch_name) const {
  return exported_names(deepbatch_name, naming_);
}

ServerMetrics::ServerMetrics(std::string model_name, MetricNaming naming, double machine_read_bytes_per_s)
    : model_(std::move(model_name)),
      naming_(naming),
      http_requests_(reg_.counter(names("deepbatch:http_requests_total"), "HTTP responses by status code.", {"code"})),
      success_(reg_.counter(names("deepbatch:request_success_total"), "Finished samples by finish reason.",
                            {"model_name", "finished_reason"})),
      prompt_tokens_(
          reg_.counter(names("deepbatch:prompt_tokens_total"),
                       "Prompt tokens computed (prefix-cache hits excluded).", kModelLabel)
              .labels({model_})),
      generation_tokens_(
          reg_.counter(names("deepbatch:generation_tokens_total"), "Tokens generated.", kModelLabel).labels({model_})),
      prefix_queries_(reg_.counter(names("deepbatch:prefix_cache_queries_total"),
                                   "Prompt tokens looked up in the prefix cache (computed + hit).", kModelLabel)
                          .labels({model_})),
      prefix_hits_(
          reg_.counter(names("deepbatch:prefix_cache_hits_total"), "Prompt tokens served by the prefix cache.", kModelLabel)
              .labels({model_})),
      preemptions_(
          reg_.counter(names("deepbatch:num_preemptions_total"),
                       "Requests preempted (recompute).", kModelLabel).labels({model_})),
      timeouts_(reg_.counter(names("deepbatch:request_timeouts_total"),
                             "Requests ended because their deadline passed (finish reason timeout).", kModelLabel)
                    .labels({model_})),
      queue_timeouts_(reg_.counter(names("deepbatch:request_queue_timeouts_total"),
                                   "Requests rejected after waiting in the queue past their class's limit.", kModelLabel)
                          .labels({model_})),
      promotions_(reg_.counter(names("deepbatch:request_promotions_total"),
                               "Requests promoted one priority class after waiting past their class's limit.", kModelLabel)
                      .labels({model_})),
      running_(
          reg_.gauge(names("deepbatch:num_requests_running"),
                     "Sequences running (a request with n samples counts n).", kModelLabel)
              .labels({model_})),
      waiting_(
          reg_.gauge(names("deepbatch:num_requests_waiting"),
                     "Sequences waiting to be scheduled.", kModelLabel).labels({model_})),
      preemptions_per_finished_(
          reg_.gauge(names("deepbatch:preemptions_per_finished_request"),
                     "Preemptions so far over sequences finished so far (a request of n samples counts n); "
                     "0 before any finishes. Above 1, the KV cache is thrashing.",
                     kModelLabel)
              .labels({model_})),
      running_by_priority_(reg_.gauge(names("deepbatch:num_requests_running_by_priority"),
                                      "Sequences running, by priority class (0 interactive, 1 normal, 2 background).",
                                      {"model_name", "priority"})),
      waiting_by_priority_(reg_.gauge(names("deepbatch:num_requests_waiting_by_priority"),
                                      "Sequences waiting, by priority class (0 interactive, 1 normal, 2 background).",
                                      {"model_name", "priority"})),
      kv_usage_(reg_.gauge(names("deepbatch:kv_cache_usage_perc"),
                           "Fraction of KV cache blocks in use (0 to 1).", kModelLabel)
                    .labels({model_})),
      kv_free_blocks_(reg_.gauge(names("deepbatch:kv_cache_free_blocks"),
                                 "Free KV cache blocks.", kModelLabel).labels({model_})),
      kv_total_blocks_(
          reg_.gauge(names("deepbatch:kv_cache_total_blocks"),
                     "KV cache blocks in the pool (null block included).", kModelLabel)
              .labels({model_})),
      ttft_(reg_.histogram(names("deepbatch:time_to_first_token_seconds"),
                           "Submit to first token.", ttft_buckets(), kModelLabel)
                .labels({model_})),
      itl_(reg_.histogram(names("deepbatch:inter_token_latency_seconds"), "Time between consecutive output tokens.",
                          token_latency_buckets(), kModelLabel)
               .labels({model_})),
      tpot_(reg_.histogram(names("deepbatch:time_per_output_token_seconds"),
                           "Per request: (end-to-end - first token) / (generated tokens - 1).", token_latency_buckets(),
                           kModelLabel)
                .labels({model_})),
      e2e_(reg_.histogram(names("deepbatch:e2e_request_latency_seconds"),
                          "Submit to finish.", request_latency_buckets(),
                          kModelLabel)
               .labels({model_})),
      queue_(reg_.histogram(names("deepbatch:request_queue_time_seconds"), "Submit to first scheduled.",
                            request_latency_buckets(), kModelLabel)
                 .labels({model_})),
      request_prompt_tokens_(reg_.histogram(names("deepbatch:request_prompt_tokens"),
                                            "Per request: prompt tokens (prefix-cache hits included).",
                                            token_count_buckets(), kModelLabel)
                                 .labels({model_})),
      request_generation_tokens_(reg_.histogram(names("deepbatch:request_generation_tokens"),
                                                "Per request: tokens generated over all its samples.",
                                                token_count_buckets(), kModelLabel)
                                     .labels({model_})),
      step_seconds_(reg_.histogram(names("deepbatch:step_duration_seconds"),
                                   "Per engine step: schedule, model forward and update.", step_time_buckets(), kModelLabel)
                        .labels({model_})),
      step_tokens_(reg_.histogram(names("deepbatch:iteration_tokens_total"), "Per engine step: tokens computed.",
                                  step_size_buckets(), kModelLabel)
                       .labels({model_})),
      step_sequences_(reg_.histogram(names("deepbatch:step_sequences"), "Per engine step: sequences computed.",
                                     step_size_buckets(), kModelLabel)
                          .labels({model_})),
      pool_(model_),
      guard_(model_),
      router_(model_),
      sla_(model_),
      spec_(model_, naming_),
      roofline_(model_, machine_read_bytes_per_s) {}

void ServerMetrics::on_step(const StepRecord& step) {
  step_seconds_.observe(step.seconds);
  step_tokens_.observe(step.tokens);
  step_sequences_.observe(step.sequences);
  roofline_.on_step(step);
}

void ServerMetrics::on_http_response(int status) { http_requests_.labels({std::to_string(status)}).inc(); }

void ServerMetrics::on_sample_finished(FinishReason reason) {
  if (reason == FinishReason::None) return;
  success_.labels({model_, finish_reason_name(reason)}).inc();
}

void ServerMetrics::on_request_finished(const RequestStats& s, int samples) {
  queue_.observe(s.queue_seconds);
  e2e_.observe(s.e2e_seconds);
  request_prompt_tokens_.observe(s.prompt_tokens);
  request_generation_tokens_.observe(s.generated_tokens);
  if (s.generated_tokens > 0) ttft_.observe(s.ttft_seconds);
  const double per_sample = static_cast<double>(s.generated_tokens) / std::max(1, samples);
  if (per_sample > 1) tpot_.observe((s.e2e_seconds - s.ttft_seconds) / (per_sample - 1));
}

void ServerMetrics::on_tokens(double seconds, size_t tokens) {
  if (tokens == 0) return;
  const double each = seconds / static_cast<double>(tokens);
  for (size_t i = 0; i < tokens; ++i) itl_.observe(each);
}

std::string ServerMetrics::render(const EngineStats& s) {
  prompt_tokens_.raise_to(static_cast<double>(s.prompt_tokens));
  generation_tokens_.raise_to(static_cast<double>(s.generated_tokens));
  prefix_queries_.raise_to(static_cast<double>(s.prompt_tokens + s.cached_prompt_tokens));
  prefix_hits_.raise_to(static_cast<double>(s.cached_prompt_tokens));
  preemptions_.raise_to(static_cast<double>(s.preemptions));
  timeouts_.raise_to(static_cast<double>(s.timeouts));
  queue_timeouts_.raise_to(static_cast<double>(s.queue_timeouts));
  promotions_.raise_to(static_cast<double>(s.promotions));
  running_.set(static_cast<double>(s.running));
  waiting_.set(static_cast<double>(s.waiting));
  preemptions_per_finished_.set(s.finished_sequences > 0 ? static_cast<double>(s.preemptions) /
                                                               static_cast<double>(s.finished_sequences)
                                                         : 0.0);
  for (int p = 0; p < 3; ++p) {
    running_by_priority_.labels({model_, std::to_string(p)}).set(static_cast<double>(s.running_by_priority[p]));
    waiting_by_priority_.labels({model_, std::to_string(p)}).set(static_cast<double>(s.waiting_by_priority[p]));
  }
  kv_usage_.set(s.kv_usage);
  kv_free_blocks_.set(static_cast<double>(s.free_blocks));
  kv_total_blocks_.set(static_cast<double>(s.num_blocks));
  return reg_.render() + pool_.render(s) + guard_.render(s.memory_guard) + router_.render(s.router) +
         sla_.render(s.sla) + spec_.render(s.spec) + roofline_.render();
}

}  // namespace db::server
