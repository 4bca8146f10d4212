// Per-request randomness. The uniform used at a decoding step is a pure function
// of (seed, stream, step): it never depends on other requests in the batch, on
// batch order, or on how often the request was preempted, recomputed or sampled
// and discarded, so a fixed seed gives the same text in any batch.
#pragma once
#include <cstdint>

#include "sample/sampling_params.h"

namespace db {

struct SamplerState {
  uint64_t seed = 0;    // Philox key
  uint32_t stream = 0;  // separates sibling samples of one request (n > 1) that share a seed

  // The state for one sample of a request: params.seed when set, else a seed from std::random_device.
  static SamplerState for_request(const SamplingParams& params, uint32_t stream = 0);

  // Uniform in [0, 1) for output position `step` (the number of tokens generated before it).
  // `lane` selects further independent draws at the same step (e.g. for rejection sampling).
  double uniform(uint64_t step, uint32_t lane = 0) const;
};

}  // namespace db
