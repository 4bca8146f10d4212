#include "model/tensor_name_map.h"

namespace db {

std::string TensorNameMap::hf_name(const std::string& gguf_name) const {
  if (auto it = globals.find(gguf_name); it != globals.end()) return it->second;
  const std::string prefix = "blk.";
  if (gguf_name.compare(0, prefix.size(), prefix) != 0) return "";
  const size_t dot = gguf_name.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size()) return "";
  const std::string layer = gguf_name.substr(prefix.size(), dot - prefix.size());
  if (layer.find_first_not_of("0123456789") != std::string::npos) return "";
  auto it = layer_suffixes.find(gguf_name.substr(dot + 1));
  if (it == layer_suffixes.end()) return "";
  return "model.layers." + layer + "." + it->second;
}

std::map<std::string, std::string> decoder_global_names() {
  return {
      {"token_embd.weight", "model.embed_tokens.weight"},
      {"output_norm.weight", "model.norm.weight"},
      {"output.weight", "lm_head.weight"},
  };
}

}  // namespace db
