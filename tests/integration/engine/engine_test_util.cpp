#include "engine_test_util.h"

#include <filesystem>
#include <memory>

#include "engine/engine_core.h"
#include "model/gguf_convert.h"
#include "scratch_dir.h"

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

const std::string& default_model_as(DType type) {
  static std::mutex mu;
  static ScratchDir dir("converted_models");  // this process's own: tests run side by side
  static std::map<DType, std::string> paths;
  std::lock_guard<std::mutex> lock(mu);
  auto it = paths.find(type);
  if (it != paths.end()) return it->second;
  const std::string path = dir.file("default-model-" + dtype_name(type) + ".gguf");
  convert_gguf(kDefaultModelPath, path, type);
  return paths.emplace(type, path).first->second;
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
  size_t per_block = engine_kv_cache_spec(bundle.model(), cfg).bytes_per_block();
  if (cfg.speculative.method == "draft_model")  // the budget holds the draft's blocks too
    per_block += engine_kv_cache_spec(*load_model(cfg.speculative.model), cfg).bytes_per_block();
  return blocks * static_cast<int64_t>(per_block);
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
