#include "spec/speculative_config.h"

#include "util/error.h"

namespace db {

void SpeculativeConfig::validate() const {
  if (!enabled()) return;
  if (method != "ngram") throw Error("speculative method: expected 'ngram', got '" + method + "'");
  if (num_tokens < 1 || num_tokens > 32)
    throw Error("num_speculative_tokens: must be in [1, 32], got " + std::to_string(num_tokens));
  if (ngram_min < 1 || ngram_max < ngram_min)
    throw Error("n-gram sizes: need 1 <= ngram-min <= ngram-max, got " + std::to_string(ngram_min) + " and " +
                std::to_string(ngram_max));
}

}  // namespace db
