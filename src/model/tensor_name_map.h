// How a Hugging Face checkpoint names an architecture's tensors, given their GGUF
// names: whole-model tensors by full name, per-layer tensors by suffix, so that
// "blk.N.<gguf suffix>" is "model.layers.N.<checkpoint suffix>".
#pragma once
#include <map>
#include <string>

namespace db {

struct TensorNameMap {
  std::map<std::string, std::string> globals;         // "token_embd.weight" -> "model.embed_tokens.weight"
  std::map<std::string, std::string> layer_suffixes;  // "attn_q.weight" -> "self_attn.q_proj.weight"

  // The checkpoint name of `gguf_name`; empty when the map has no equivalent
  // (unknown name, or a "blk." name whose layer is not a decimal number).
  std::string hf_name(const std::string& gguf_name) const;
};

// The whole-model tensors every decoder loads (token_embd, output_norm, output:
// model/weight_loading.h), as transformers' *ForCausalLM name them.
std::map<std::string, std::string> decoder_global_names();

}  // namespace db
