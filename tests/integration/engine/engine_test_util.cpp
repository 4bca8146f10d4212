#include "engine_test_util.h"

#include <filesystem>
#include <memory>

#include "engine/engine_core.h"

namespace db::test {

ModelBundle* default_bundle() {
  static std::unique_ptr<ModelBundle> bundle = [] {
    std::unique_ptr<ModelBundle> b;
    if (std::filesystem::exists(kDefaultModelPath)) b = ModelBundle::open(kDefaultModelPath);
    return b;
  }();
  EXPECT_NE(bundle, nullptr) << kDefaultModelPath << " is missing; run scripts/setup.sh to download the default model";
  return bundle.get();
}

OutputCallback Collector::callback() {
  return [this](RequestId id, const SampleOutput& out, const RequestStats& stats, bool final) {
    std::lock_guard<std::mutex> lock(mu_);
    RequestResult& r = results_[id];
    if (r.samples.size() <= static_cast<size_t>(out.index)) r.samples.resize(static_cast<size_t>(out.index) + 1);
    SampleResult& s = r.samples[static_cast<size_t>(out.index)];
    s.tokens.insert(s.tokens.end(), out.new_token_ids.begin(), out.new_token_ids.end());
    s.logprobs.insert(s.logprobs.end(), out.new_logprobs.begin(), out.new_logprobs.end());
    s.top_logprobs.insert(s.top_logprobs.end(), out.new_top_logprobs.begin(), out.new_top_logprobs.end());
    s.text += out.new_text;
    ++s.outputs;
    if (out.finish != FinishReason::None) {
      s.finish = out.finish;
      s.stop_reason = out.stop_reason;
    }
    r.stats = stats;
    if (final) ++r.finals;
  };
}

std::map<RequestId, RequestResult> Collector::results() const {
  std::lock_guard<std::mutex> lock(mu_);
  return results_;
}

EngineRequest greedy_request(std::vector<int32_t> prompt, int32_t max_tokens) {
  EngineRequest r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  return r;
}

std::vector<RequestResult> run_batch(ModelBundle& bundle, const EngineConfig& cfg,
                                     const std::vector<EngineRequest>& reqs, EngineStats* stats) {
  Engine engine(bundle, cfg);
  Collector c;
  std::vector<RequestId> ids;
  for (const EngineRequest& r : reqs) ids.push_back(engine.submit(r, c.callback()));
  engine.wait_idle();
  if (stats) *stats = engine.stats();
  const auto all = c.results();
  std::vector<RequestResult> out;
  for (RequestId id : ids) out.push_back(all.at(id));
  return out;
}

std::vector<RequestResult> run_alone(ModelBundle& bundle, const EngineConfig& cfg,
                                     const std::vector<EngineRequest>& reqs) {
  std::vector<RequestResult> out;
  for (const EngineRequest& r : reqs) out.push_back(run_batch(bundle, cfg, {r}).front());
  return out;
}

int64_t kv_bytes_for_blocks(ModelBundle& bundle, const EngineConfig& cfg, int64_t blocks) {
  return blocks * static_cast<int64_t>(engine_kv_cache_spec(bundle.model(), cfg).bytes_per_block());
}

std::vector<RequestResult> run_batch(const EngineConfig& cfg, const std::vector<EngineRequest>& reqs,
                                     EngineStats* stats) {
  return run_batch(*default_bundle(), cfg, reqs, stats);
}

std::vector<RequestResult> run_alone(const EngineConfig& cfg, const std::vector<EngineRequest>& reqs) {
  return run_alone(*default_bundle(), cfg, reqs);
}

int64_t kv_bytes_for_blocks(const EngineConfig& cfg, int64_t blocks) {
  return kv_bytes_for_blocks(*default_bundle(), cfg, blocks);
}

}  // namespace db::test
