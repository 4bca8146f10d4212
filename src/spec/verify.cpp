#include "spec/verify.h"

#include "util/error.h"

namespace db {

std::vector<SampleResult> verify_drafts(Sampler& sampler, const VerifyInput& in, std::vector<int32_t>& scratch,
                                        VerifyConstraint* constraint) {
  DB_CHECK(in.logits && in.params && in.state, "verify_drafts: missing logits, parameters or sampler state");
  std::vector<SampleResult> emitted;
  std::span<const int32_t> output = in.output;
  for (size_t row = 0; row <= in.drafts.size(); ++row) {
    const std::span<const uint32_t> allowed = constraint ? constraint->next_mask() : std::span<const uint32_t>{};
    const float* logits = in.logits + row * static_cast<size_t>(in.vocab);
    emitted.push_back(sampler.sample(logits, in.vocab, *in.params, *in.state, TokenHistory{in.prompt, output}, allowed));
    const int32_t token = emitted.back().token;
    if (constraint) constraint->advance(token);
    if (row == in.drafts.size() || token != in.drafts[row]) break;
    if (row == 0) scratch.assign(in.output.begin(), in.output.end());
    scratch.push_back(token);
    output = scratch;
  }
  return emitted;
}

}  // namespace db
