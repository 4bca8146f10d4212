#include "model/weight_read_bytes.h"

#include <cmath>
#include <string>

#include "io/gguf.h"
#include "io/hf_checkpoint.h"
#include "model/config.h"
#include "model/model_source.h"

namespace db {

double WeightReadBytes::per_step(int32_t tokens) const {
  double bytes = static_cast<double>(dense);
  if (routed_experts > 0 && n_experts > 0 && tokens > 0) {
    const double miss = 1.0 - static_cast<double>(n_experts_used) / n_experts;
    bytes += static_cast<double>(routed_experts) * (1.0 - std::pow(miss, tokens));
  }
  return bytes;
}

WeightReadBytes weight_read_bytes(const ModelSource& src, const ModelConfig& config) {
  WeightReadBytes w;
  w.n_experts = config.moe.n_experts;
  w.n_experts_used = config.moe.n_experts_used;
  int64_t embedding = 0;
  bool has_head = false;
  const auto add = [&](size_t nbytes, bool routed, bool is_embedding, bool is_head) {
    const auto n = static_cast<int64_t>(nbytes);
    if (is_embedding) {
      embedding += n;
    } else {
      (routed ? w.routed_experts : w.dense) += n;
    }
    has_head = has_head || is_head;
  };
  if (const GGUFFile* g = src.gguf()) {
    for (const GGUFTensorInfo& t : g->tensor_infos())
      add(t.nbytes, t.name.find("_exps") != std::string::npos, t.name == "token_embd.weight",
          t.name == "output.weight");
  } else if (const HFCheckpoint* hf = src.hf()) {
    for (const std::string& name : hf->tensor_names())
      add(hf->tensor(name).nbytes(), name.find(".experts.") != std::string::npos,
          name.find("embed_tokens") != std::string::npos, name.find("lm_head") != std::string::npos);
  }
  if (!has_head) w.dense += embedding;  // tied: the head reads the whole embedding
  return w;
}

}  // namespace db
