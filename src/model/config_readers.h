// Format-specific halves of read_model_config (model/config.h).
#pragma once
#include <string>

#include "model/config.h"

namespace db {

// Each reads the fields every architecture shares, then hands the same keys to the
// source's registry entry (Architecture::read_gguf / read_hf) for the rest.
// From GGUF metadata `<arch>.*` and the tensors rope_freqs.weight / output.weight / blk.0.attn_q.bias.
ModelConfig config_from_gguf(const ModelSource& src);
// From config.json and the presence of lm_head.weight.
ModelConfig config_from_hf(const ModelSource& src);
// Throws db::Error naming `where` when the numbers are inconsistent (zero sizes, heads not dividing, ...).
void validate_config(const ModelConfig& c, const std::string& where);

}  // namespace db
