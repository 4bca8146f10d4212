// Scripted scheduler steps for tests: a fake model whose sampled token depends
// only on the sequence and its output position, as a real one does.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "sched/scheduler.h"

namespace db::test {

inline SchedulerConfig tiny_config(int32_t max_seqs = 8, int32_t budget = 64, int32_t num_blocks = 8,
                                   bool caching = true, int32_t threshold = 0) {
  SchedulerConfig c;
  c.max_num_seqs = max_seqs;
  c.max_num_batched_tokens = budget;
  c.long_prefill_threshold = threshold;
  c.block_size = 4;
  c.num_blocks = num_blocks;
  c.enable_prefix_caching = caching;
  c.max_model_len = 64;
  c.eos_token_ids = {99};
  return c;
}

// tiny_config under the first-chunk admission rule: for scripts of preemption,
// whose pools are sized so that admitting on the first chunk runs out of blocks.
inline SchedulerConfig first_chunk_config(int32_t max_seqs = 8, int32_t budget = 64, int32_t num_blocks = 8,
                                          bool caching = true, int32_t threshold = 0) {
  SchedulerConfig c = tiny_config(max_seqs, budget, num_blocks, caching, threshold);
  c.admission = AdmissionPolicy::FirstChunk;
  return c;
}

// Tokens first, first + 1, ..., first + len - 1.
inline std::vector<int32_t> iota_tokens(int32_t first, int32_t len) {
  std::vector<int32_t> t(static_cast<size_t>(len));
  std::iota(t.begin(), t.end(), first);
  return t;
}

inline RequestParams params(RequestId id, std::vector<int32_t> prompt, int32_t max_tokens = 4, int priority = 1,
                            int32_t n = 1) {
  RequestParams p;
  p.id = id;
  p.prompt = std::move(prompt);
  p.max_tokens = max_tokens;
  p.priority = priority;
  p.num_samples = n;
  p.sampling.temperature = 0;
  p.sampler_state.seed = 7;
  return p;
}

// The token the fake model samples for sequence `id` at output position `pos`, sample `k` of a fork.
inline int32_t fake_token(RequestId id, int32_t pos, int32_t k = 0) {
  return 1000 + static_cast<int32_t>(id) * 10 + pos + 100 * k;
}

// Samples for every scheduled sequence that samples this step.
inline ModelRunnerOutput fake_run(const Scheduler& s, const SchedulerOutput& out) {
  ModelRunnerOutput r;
  auto add = [&](const ScheduledRequest& sr) {
    if (sr.num_samples == 0) return;
    const Request* req = s.find(sr.id);
    RequestSamples rs;
    rs.id = sr.id;
    for (int32_t k = 0; k < sr.num_samples; ++k)
      rs.samples.push_back(SampledToken{fake_token(sr.id, req->num_output_tokens(), k), std::nullopt, {}});
    r.requests.push_back(rs);
  };
  for (const auto& sr : out.scheduled_running) add(sr);
  for (const auto& sr : out.scheduled_new) add(sr);
  return r;
}

inline std::vector<RequestId> ids_of(const std::vector<ScheduledRequest>& v) {
  std::vector<RequestId> ids;
  for (const auto& s : v) ids.push_back(s.id);
  return ids;
}

inline const ScheduledRequest& entry(const SchedulerOutput& out, RequestId id) {
  for (const auto& s : out.scheduled_running)
    if (s.id == id) return s;
  for (const auto& s : out.scheduled_new)
    if (s.id == id) return s;
  throw std::runtime_error("sequence " + std::to_string(id) + " not scheduled");
}

inline bool scheduled(const SchedulerOutput& out, RequestId id) {
  auto has = [id](const std::vector<ScheduledRequest>& v) {
    return std::any_of(v.begin(), v.end(), [id](const ScheduledRequest& s) { return s.id == id; });
  };
  return has(out.scheduled_running) || has(out.scheduled_new);
}

using Ids = std::vector<RequestId>;
using Blocks = std::vector<int32_t>;

}  // namespace db::test
