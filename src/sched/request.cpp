#include "sched/request.h"

namespace db {

bool is_finished(RequestStatus s) {
  return s == RequestStatus::FinishedStopped || s == RequestStatus::FinishedLength ||
         s == RequestStatus::FinishedAborted || s == RequestStatus::FinishedError ||
         s == RequestStatus::FinishedTimeout || s == RequestStatus::FinishedQueueTimeout;
}

Request make_request(const RequestParams& p, uint64_t arrival_seq) {
  Request r;
  r.id = p.id;
  r.group_id = p.id;
  r.sample_index = 0;
  r.num_samples = p.num_samples;
  r.tokens = p.prompt;
  r.num_prompt_tokens = static_cast<int32_t>(p.prompt.size());
  r.sampling = p.sampling;
  r.sampler_state = p.sampler_state;
  r.max_tokens = p.max_tokens;
  r.stop_token_ids = p.stop_token_ids;
  r.ignore_eos = p.ignore_eos;
  r.priority = p.priority;
  r.requested_priority = p.priority;
  r.tenant = p.tenant;
  r.arrival_time = p.arrival_time;
  r.class_entry_time = p.arrival_time;
  r.deadline = p.deadline;
  r.arrival_seq = arrival_seq;
  return r;
}

}  // namespace db
