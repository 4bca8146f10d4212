// Running the engine in tests: the default model (one shared bundle), a collector
// that gathers each request's outputs, and runs of requests together or alone.
#pragma once
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bundle/model_bundle.h"
#include "default_model.h"
#include "engine/engine.h"

namespace db::test {

// The default model, opened once; nullptr (and a test failure) when it is missing.
ModelBundle* default_bundle();

// The default model file with its weight matrices converted to `type`
// (model/gguf_convert.h), written once per process into a scratch directory of
// its own: a second model of the same vocabulary (a draft, or a target).
const std::string& default_model_as(DType type);

// Everything one sample produced.
struct SampleResult {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;  // when requested: one per token
  std::vector<std::vector<std::pair<int32_t, float>>> top_logprobs;
  std::string text;
  FinishReason finish = FinishReason::None;
  std::string stop_reason;
  int outputs = 0;  // callbacks received
};

// Everything one request produced.
struct RequestResult {
  std::vector<SampleResult> samples;
  RequestStats stats;
  int finals = 0;  // callbacks with final == true
};

// Thread-safe sink for OutputCallbacks.
class Collector {
 public:
  OutputCallback callback();
  // Results by request id (call after Engine::wait_idle()).
  std::map<RequestId, RequestResult> results() const;

 private:
  mutable std::mutex mu_;
  std::map<RequestId, RequestResult> results_;
};

// A greedy, fixed-length request.
EngineRequest greedy_request(std::vector<int32_t> prompt, int32_t max_tokens);

// Runs the requests through one engine on `bundle`, all submitted at once; returns
// results in request order.
std::vector<RequestResult> run_batch(ModelBundle& bundle, const EngineConfig& cfg,
                                     const std::vector<EngineRequest>& reqs, EngineStats* stats = nullptr);
// Runs each request in an engine of its own on `bundle` (nothing else in flight).
std::vector<RequestResult> run_alone(ModelBundle& bundle, const EngineConfig& cfg,
                                     const std::vector<EngineRequest>& reqs);
// Bytes of `blocks` KV blocks of `bundle`'s model for the config's block size and
// dtype (and as many of the draft model's, when cfg speculates with one).
int64_t kv_bytes_for_blocks(ModelBundle& bundle, const EngineConfig& cfg, int64_t blocks);

// The same on the default model.
std::vector<RequestResult> run_batch(const EngineConfig& cfg, const std::vector<EngineRequest>& reqs,
                                     EngineStats* stats = nullptr);
std::vector<RequestResult> run_alone(const EngineConfig& cfg, const std::vector<EngineRequest>& reqs);
int64_t kv_bytes_for_blocks(const EngineConfig& cfg, int64_t blocks);

}  // namespace db::test
