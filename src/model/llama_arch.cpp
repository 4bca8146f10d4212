#include "model/llama_arch.h"

#include "io/gguf_writer.h"
#include "model/config.h"
#include "model/config_keys.h"
#include "model/llama_decoder.h"

namespace db {

namespace {

// The tensors LlamaDecoder loads, as transformers' LlamaForCausalLM / Qwen2ForCausalLM name them.
TensorNameMap llama_family_names() {
  TensorNameMap m;
  m.globals = decoder_global_names();
  m.layer_suffixes = {
      {"attn_norm.weight", "input_layernorm.weight"},
      {"attn_q.weight", "self_attn.q_proj.weight"},
      {"attn_q.bias", "self_attn.q_proj.bias"},
      {"attn_k.weight", "self_attn.k_proj.weight"},
      {"attn_k.bias", "self_attn.k_proj.bias"},
      {"attn_v.weight", "self_attn.v_proj.weight"},
      {"attn_v.bias", "self_attn.v_proj.bias"},
      {"attn_output.weight", "self_attn.o_proj.weight"},
      {"ffn_norm.weight", "post_attention_layernorm.weight"},
      {"ffn_gate.weight", "mlp.gate_proj.weight"},
      {"ffn_up.weight", "mlp.up_proj.weight"},
      {"ffn_down.weight", "mlp.down_proj.weight"},
  };
  return m;
}

void read_llama_gguf(const GGUFConfigKeys&, ModelConfig& c) {
  // llama.cpp's converter permutes llama's q/k rows so that adjacent pairs rotate together.
  c.rope_style = kernels::RopeStyle::INTERLEAVED;
}

void read_llama_hf(const HFConfigKeys&, ModelConfig&) {}  // the shared reader covers llama

// Read by llama.cpp; config_from_gguf reads the head width from key_length alone.
void write_llama_family_gguf(const ModelConfig& c, GGUFWriter& w) {
  w.add_uint32(c.arch + ".attention.value_length", static_cast<uint32_t>(c.head_dim));
}

void read_qwen2_gguf(const GGUFConfigKeys&, ModelConfig& c) { c.rope_style = kernels::RopeStyle::NEOX; }

// Qwen2's q/k/v projections always have biases; its config.json has no attention_bias key.
void read_qwen2_hf(const HFConfigKeys&, ModelConfig& c) { c.qkv_bias = true; }

}  // namespace

Architecture llama_architecture() {
  return {"llama",        {"llama"}, &make_llama_decoder, &read_llama_gguf, &read_llama_hf, llama_family_names(),
          &write_llama_family_gguf, /*gguf_pairs_qk_rows=*/true};
}

Architecture qwen2_architecture() {
  return {"qwen2",        {"qwen2"}, &make_llama_decoder, &read_qwen2_gguf, &read_qwen2_hf, llama_family_names(),
          &write_llama_family_gguf, /*gguf_pairs_qk_rows=*/false};
}

}  // namespace db
