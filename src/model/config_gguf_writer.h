// A model configuration written as the GGUF metadata that config_from_gguf
// (model/config_readers.h) reads back into the same configuration, for
// converting a Hugging Face checkpoint into a GGUF file
// (model/checkpoint_gguf.h, which checks the round trip).
#pragma once
#include <vector>

#include "model/config.h"

namespace db {

class GGUFWriter;
struct Architecture;

// Adds general.architecture, the keys every architecture shares
// ("<arch>.block_count", ...), and those of `arch` (Architecture::write_gguf).
// RoPE scaling: linear and YaRN as keys; llama3's per-frequency divisors have
// no key and go into the tensor rope_freqs.weight (rope_freq_factors below).
void add_config_gguf_keys(const ModelConfig& c, const Architecture& arch, GGUFWriter& w);

// The rope_freqs.weight values (one per rotated pair) with which a GGUF
// file's plain RoPE frequencies, each divided by its value, equal
// rope_inv_freq(c) float for float; empty when c's scaling is written as keys.
std::vector<float> rope_freq_factors(const ModelConfig& c);

}  // namespace db
