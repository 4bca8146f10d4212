// Runs a fixed set of generation requests together over the model's varlen
// forward: every step carries one decode token of each running sequence plus
// prompt chunks of the others, up to a token budget. Each sequence owns a
// contiguous range of KV blocks sized for its prompt plus max_new_tokens.
//
// This is the simple driver behind `deepbatch generate` / `chat`; the
// continuous-batching engine (scheduler, block pool, prefix cache) supersedes it
// for serving and offline jobs.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "model/model.h"
#include "sample/sampler.h"
#include "sample/sampling_params.h"
#include "tokenizer/tokenizer.h"

namespace db {

struct GenerateRequest {
  std::vector<int32_t> prompt;      // prompt token ids (non-empty)
  SamplingParams sampling;          // how to pick each token
  int32_t max_new_tokens = 128;     // generated tokens at most
  bool ignore_eos = false;          // keep going past end-of-generation tokens
  std::vector<int32_t> stop_ids;    // extra token ids that end generation
};

enum class GenerateFinish { Stop, Length };
const char* generate_finish_name(GenerateFinish r);

struct GenerateOutput {
  std::vector<int32_t> tokens;  // generated tokens, the stop token included when one ended it
  GenerateFinish finish = GenerateFinish::Length;
};

struct GenerateStats {
  int64_t prompt_tokens = 0;      // prompt tokens computed
  int64_t generated_tokens = 0;   // tokens sampled
  double prefill_seconds = 0;     // wall time of steps that carried prompt tokens
  double decode_seconds = 0;      // wall time of steps that carried only decode tokens
  int64_t steps = 0;              // forward calls
};

struct GeneratorOptions {
  int block_size = 16;                   // KV block size in tokens
  DType kv_dtype = DType::F16;           // KV cache element type
  int32_t max_batched_tokens = 512;      // tokens per forward step at most
};

// Called for every sampled token: (request index, token id).
using TokenCallback = std::function<void(size_t, int32_t)>;

class BatchGenerator {
 public:
  // model, tokenizer and pool must outlive the generator.
  BatchGenerator(Model& model, const Tokenizer& tokenizer, ThreadPool& pool, GeneratorOptions opts = {});

  // Generates for all requests; outputs are in request order. Throws db::Error
  // for an empty prompt, a token id outside the vocabulary, or a prompt that
  // does not fit the model's context.
  std::vector<GenerateOutput> run(const std::vector<GenerateRequest>& requests, const TokenCallback& on_token = {},
                                  GenerateStats* stats = nullptr);

 private:
  Model& model_;
  const Tokenizer& tokenizer_;
  ThreadPool& pool_;
  GeneratorOptions opts_;
  Sampler sampler_;
};

}  // namespace db
