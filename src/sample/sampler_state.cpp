#include "sample/sampler_state.h"

#include <random>

#include "sample/philox.h"

namespace db {

SamplerState SamplerState::for_request(const SamplingParams& params, uint32_t stream) {
  SamplerState state;
  state.stream = stream;
  if (params.seed) {
    state.seed = *params.seed;
  } else {
    std::random_device device;
    state.seed = (static_cast<uint64_t>(device()) << 32) | device();
  }
  return state;
}

double SamplerState::uniform(uint64_t step, uint32_t lane) const {
  const PhiloxCounter counter = {static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32), stream, lane};
  const PhiloxKey key = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  return philox_uniform(philox4x32_10(counter, key));
}

}  // namespace db
