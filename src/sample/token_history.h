// The tokens a request has seen so far, as the sampler needs them.
#pragma once
#include <cstdint>
#include <span>

namespace db {

struct TokenHistory {
  std::span<const int32_t> prompt;  // prompt tokens (repetition penalty only)
  std::span<const int32_t> output;  // tokens generated so far; output.size() is the decoding step
};

}  // namespace db
