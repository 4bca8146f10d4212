// RoPE inverse frequencies of a model with its long-context scaling applied.
#pragma once
#include <vector>

#include "model/config.h"

namespace db {

// rope_dims / 2 values; pair i rotates by position * result[i]. Follows the
// Hugging Face definitions (f32 arithmetic) for every RopeScalingType, then
// divides by rope_scaling.freq_factors when present.
std::vector<float> rope_inv_freq(const ModelConfig& c);

// Multiplier of cos and sin (YaRN attention factor; 1 otherwise).
float rope_mscale(const ModelConfig& c);

}  // namespace db
