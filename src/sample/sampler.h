// Token sampling from one row of logits per request.
//
// Processing order (as in vLLM / HF): penalties -> logit bias -> constraint mask
// -> temperature -> top-k -> top-p -> min-p -> draw. Greedy (temperature 0) is the argmax of the penalized
// logits, ties to the lowest id; top-k / top-p / min-p cannot change it.
// Truncation is deterministic on ties: candidates are ranked by (logit desc,
// id asc), top-k keeps exactly k, top-p keeps a token iff the probability of
// the tokens ranked above it is < top_p (so at least one token survives), and
// min-p keeps tokens with probability >= min_p * highest probability.
// A draw uses the single uniform SamplerState::uniform(history.output.size()),
// so the result is a pure function of (logits, params, state, history).
//
// Logprobs are those of the raw model distribution, log_softmax(logits) before
// penalties, temperature and truncation (vLLM's default "raw_logprobs").
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sample/logprobs.h"
#include "sample/penalties.h"
#include "sample/sampler_state.h"
#include "sample/sampling_params.h"
#include "sample/token_constraint.h"
#include "sample/token_history.h"
#include "sample/truncation.h"

namespace db {

struct SampleResult {
  int32_t token = -1;                      // the chosen token id
  std::optional<float> logprob;            // raw logprob of `token`; set iff params.logprobs is set
  std::vector<TokenLogprob> top_logprobs;  // the params.logprobs highest raw logprobs, highest first
};

// One row of a batch: the row's own parameters, randomness and history (pointers must be non-null).
struct SampleRow {
  const SamplingParams* params = nullptr;  // validated per call
  const SamplerState* state = nullptr;     // the request's seed and stream
  TokenHistory history;                    // the request's prompt and output so far
};

// Holds scratch buffers reused across calls: one Sampler per thread, not thread-safe.
class Sampler {
 public:
  // Samples one token from logits[0, vocab). Throws db::Error for invalid params,
  // history tokens outside the vocabulary, or logits that hold NaN or no finite maximum.
  // `allowed`, when not empty (token_mask_words(vocab) words): only the tokens it
  // allows may be drawn (a constraint's mask, applied after the penalties);
  // logprobs stay those of the raw distribution.
  SampleResult sample(const float* logits, int32_t vocab, const SamplingParams& params, const SamplerState& state,
                      const TokenHistory& history, std::span<const uint32_t> allowed = {});

  // Samples every row of a row-major [rows.size(), vocab] logits matrix; result i is row i's.
  std::vector<SampleResult> sample_batch(const float* logits, int32_t vocab, std::span<const SampleRow> rows);

 private:
  int32_t draw(const float* logits, int32_t vocab, const SamplingParams& params, double u);

  PenaltyScratch penalty_scratch_;
  NucleusSelector nucleus_;
  std::vector<float> penalized_;  // penalized copy of the row
  std::vector<float> weights_;    // per id: exp((logit - max) / temperature), set for the candidates only
  std::vector<int32_t> order_;    // candidate ids; after top-p the kept ones first
};

// Sets the logits of the tokens `allowed` leaves out to -inf.
void mask_logits(float* logits, int32_t vocab, std::span<const uint32_t> allowed);

// Index of the largest logit, ties to the lowest id. Throws db::Error on NaN or an empty row.
int32_t argmax(const float* logits, int32_t vocab);

}  // namespace db
