// Scheduler: folds a step's sampled tokens back into its sequences (forks and stop checks included).

#include "sched/scheduler.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sched/stop_check.h"
#include "util/error.h"

namespace db {

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

}  // namespace db
