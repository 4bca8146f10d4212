// A fake Model for driving the ModelRunner directly: it records every batch it
// is given and returns logits that depend only on each sampled row's token and
// position, so a test knows which token greedy decoding must pick. Also small
// builders for SchedulerOutput steps.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "model/kv_store.h"
#include "model/model.h"
#include "runner/model_runner.h"
#include "sample/sampling_params.h"
#include "sched/scheduler_output.h"
#include "util/thread_pool.h"

namespace db::runner_test {

inline constexpr int32_t kVocab = 16;
inline constexpr int kBlockSize = 4;

// The token the fake's logits peak at for input `token` at `position`.
inline int32_t fake_peak(int32_t token, int32_t position) { return (token * 5 + position * 3 + 1) % kVocab; }

// One row of logits: logits[v] = -0.25 * ((v - peak) mod vocab). A unique
// maximum at the peak, the runner-up at peak + 1, and every token likely
// enough that seeded sampling draws different tokens for different seeds.
inline void fake_logits(int32_t token, int32_t position, float* out) {
  const int32_t peak = fake_peak(token, position);
  for (int32_t v = 0; v < kVocab; ++v) out[v] = -0.25f * static_cast<float>((v - peak + kVocab) % kVocab);
}

class FakeModel final : public Model {
 public:
  struct Call {
    Batch batch;
    AttentionMetadata attn;
  };

  FakeModel() {
    cfg_.arch = "fake";
    cfg_.n_layers = 1;
    cfg_.hidden = 4;
    cfg_.n_heads = 1;
    cfg_.n_kv_heads = 1;
    cfg_.head_dim = 4;
    cfg_.ffn_hidden = 4;
    cfg_.vocab = kVocab;
    cfg_.max_context = 1024;
  }

  const ModelConfig& config() const override { return cfg_; }
  KVCacheShape kv_cache_shape() const override {
    return KVCacheShape::key_value(cfg_.n_layers, cfg_.n_kv_heads, cfg_.head_dim);
  }

  // Records the step, runs on_forward (when set), then returns fake_logits() of
  // each row in batch.logits_indices.
  void forward(const Batch& batch, const AttentionMetadata& attn, KVStore& kv, ThreadPool& pool,
               std::vector<float>& logits) override {
    calls.push_back({batch, attn});
    if (on_forward) on_forward(batch, attn, kv);
    logits.assign(batch.logits_indices.size() * static_cast<size_t>(kVocab), 0.0f);
    for (size_t r = 0; r < batch.logits_indices.size(); ++r) {
      const auto i = static_cast<size_t>(batch.logits_indices[r]);
      fake_logits(batch.token_ids.at(i), batch.positions.at(i), logits.data() + r * kVocab);
    }
  }

  std::vector<Call> calls;  // every forward, in order
  std::function<void(const Batch&, const AttentionMetadata&, KVStore&)> on_forward;

 private:
  ModelConfig cfg_;
};

inline SamplingParams greedy() {
  SamplingParams p;
  p.temperature = 0.0f;
  return p;
}

// A sequence new to the runner: `tokens` (num_prompt of them the prompt), of
// which [computed, computed + scheduled) run this step.
inline ScheduledRequest new_seq(RequestId id, std::vector<int32_t> tokens, int32_t computed, int32_t scheduled,
                                int32_t num_samples, std::vector<int32_t> blocks, SamplingParams sampling = greedy(),
                                SamplerState state = {}, int32_t num_prompt = -1) {
  ScheduledRequest r;
  r.id = id;
  r.num_computed_tokens = computed;
  r.num_scheduled_tokens = scheduled;
  r.num_samples = num_samples;
  r.block_ids = std::move(blocks);
  NewRequestData d;
  d.num_prompt_tokens = num_prompt < 0 ? static_cast<int32_t>(tokens.size()) : num_prompt;
  d.tokens = std::move(tokens);
  d.sampling = sampling;
  d.sampler_state = state;
  r.new_data = std::move(d);
  return r;
}

// A sequence the runner already holds.
inline ScheduledRequest running_seq(RequestId id, int32_t computed, int32_t scheduled, int32_t num_samples,
                                    std::vector<int32_t> blocks) {
  ScheduledRequest r;
  r.id = id;
  r.num_computed_tokens = computed;
  r.num_scheduled_tokens = scheduled;
  r.num_samples = num_samples;
  r.block_ids = std::move(blocks);
  return r;
}

inline SchedulerOutput make_step(std::vector<ScheduledRequest> running, std::vector<ScheduledRequest> fresh = {}) {
  SchedulerOutput s;
  s.scheduled_running = std::move(running);
  s.scheduled_new = std::move(fresh);
  for (const auto& r : s.scheduled_running) s.total_num_scheduled_tokens += r.num_scheduled_tokens;
  for (const auto& r : s.scheduled_new) s.total_num_scheduled_tokens += r.num_scheduled_tokens;
  return s;
}

// A runner over a FakeModel with a 16-block F32 KV store of kBlockSize slots a block.
class RunnerTest : public ::testing::Test {
 protected:
  explicit RunnerTest(int threads = 1) : pool(threads) {}

  FakeModel model;
  std::unique_ptr<KVStore> kv = std::make_unique<KVStore>(model.kv_cache_shape(), 16, kBlockSize, DType::F32);
  ThreadPool pool;
  ModelRunner runner{model, *kv, pool};
};

}  // namespace db::runner_test
