#include "model/config.h"

#include "model/config_readers.h"
#include "model/model_source.h"
#include "util/error.h"

namespace db {

void validate_config(const ModelConfig& c, const std::string& where) {
  auto positive = [&](int64_t v, const char* what) {
    if (v <= 0) throw Error(where + ": " + what + " must be positive, got " + std::to_string(v));
  };
  positive(c.n_layers, "layer count");
  positive(c.hidden, "hidden size");
  positive(c.ffn_hidden, "feed-forward size");
  positive(c.n_heads, "head count");
  positive(c.n_kv_heads, "kv head count");
  positive(c.head_dim, "head dimension");
  positive(c.vocab, "vocabulary size");
  positive(c.max_context, "context length");
  if (c.n_heads % c.n_kv_heads != 0)
    throw Error(where + ": " + std::to_string(c.n_heads) + " heads are not a multiple of " +
                std::to_string(c.n_kv_heads) + " kv heads");
  if (c.rope_dims <= 0 || c.rope_dims % 2 != 0 || c.rope_dims > c.head_dim)
    throw Error(where + ": rotary dimension " + std::to_string(c.rope_dims) + " must be even and in (0, " +
                std::to_string(c.head_dim) + "]");
  if (c.rope_scaling.factor <= 0.0f)
    throw Error(where + ": rope scaling factor must be positive, got " + std::to_string(c.rope_scaling.factor));
}

ModelConfig read_model_config(const ModelSource& src) {
  ModelConfig c = src.gguf() ? config_from_gguf(src) : config_from_hf(src);
  validate_config(c, src.config_path());
  return c;
}

}  // namespace db
