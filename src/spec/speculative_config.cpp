#include "spec/speculative_config.h"

#include "util/error.h"

namespace db {

void SpeculativeConfig::validate() const {
  if (!enabled()) return;
  if (method != "ngram" && method != "draft_model" && method != "mtp")
    throw Error("speculative method: expected 'ngram', 'draft_model' or 'mtp', got '" + method + "'");
  if ((method == "draft_model") != !model.empty())
    throw Error(method == "draft_model" ? "speculative method 'draft_model' needs a draft model file"
                                        : "a draft model file needs the speculative method 'draft_model'");
  if (num_tokens < 1 || num_tokens > 32)
    throw Error("num_speculative_tokens: must be in [1, 32], got " + std::to_string(num_tokens));
  if (ngram_min < 1 || ngram_max < ngram_min)
    throw Error("n-gram sizes: need 1 <= ngram-min <= ngram-max, got " + std::to_string(ngram_min) + " and " +
                std::to_string(ngram_max));
}

}  // namespace db
