// The tensors of a llama / qwen2 decoder. Matrices are views into the mapped
// file in their stored dtype, or repacked copies of them when the running ISA
// level's matmul prefers another layout (kernels/packed_weights.h); norm
// weights and biases are small f32 copies.
#pragma once
#include <vector>

#include "dist/shard_plan.h"
#include "model/config.h"
#include "model/weight_loading.h"
#include "tensor/tensor.h"
#include "util/thread_pool.h"

namespace db {

class ModelSource;

struct LlamaLayerWeights {
  std::vector<float> attn_norm;  // [hidden]
  TensorView attn_q;             // {n_heads * head_dim, hidden}
  TensorView attn_k;             // {n_kv_heads * head_dim, hidden}
  TensorView attn_v;             // {n_kv_heads * head_dim, hidden}
  std::vector<float> q_bias;     // [n_heads * head_dim]; empty without qkv_bias
  std::vector<float> k_bias;     // [n_kv_heads * head_dim]; empty without qkv_bias
  std::vector<float> v_bias;     // [n_kv_heads * head_dim]; empty without qkv_bias
  TensorView attn_output;        // {hidden, n_heads * head_dim}
  std::vector<float> ffn_norm;   // [hidden]
  TensorView ffn_gate;           // {ffn_hidden, hidden}
  TensorView ffn_up;             // {ffn_hidden, hidden}
  TensorView ffn_down;           // {hidden, ffn_hidden}
};

// token_embd, output_norm, output and the packed store (model/weight_loading.h), then the layers.
struct LlamaWeights : DecoderGlobalWeights {
  std::vector<LlamaLayerWeights> layers;
  // Column slices of a tensor-parallel shard that matmul reads in place (those
  // repacked into `packed` are freed once repacked).
  std::vector<std::vector<uint8_t>> slices;
};

// Finds every tensor by its GGUF name and checks its shape and dtype; throws
// db::Error naming the file, the tensor, and the expected and found shape.
// Matrices are repacked on `pool` when given (else on the calling thread). Once
// a matrix of a GGUF file has its packed copy, the file pages wholly inside its
// bytes are released (io/mapped_range.h); they are read back from the file only
// if the source tensor is read again. The token embedding is never released: its
// rows are looked up in place.
//
// With a plan of several ranks, the layers hold only the rank's part: the rows of
// attn_q / attn_k / attn_v (and their biases) of its heads and the rows of
// ffn_gate / ffn_up of its feed-forward columns, as views of the stored rows. Under
// ShardJoin::Reduce also the matching columns of attn_output and ffn_down, copied as
// whole quantization blocks (a split inside a block throws db::Error naming the
// tensor); under Gather those two stay whole. The embedding, the norms and the
// output head stay whole.
LlamaWeights load_llama_weights(const ModelSource& src, const ModelConfig& c, ThreadPool* pool = nullptr,
                                const dist::ShardPlan& plan = {});

// The plan of `rank` of `size` for this model (dist::make_shard_plan), joined by
// `join`; under Reduce the feed-forward is split in whole blocks of ffn_down's type.
dist::ShardPlan llama_shard_plan(const ModelSource& src, const ModelConfig& c, int rank, int size,
                                 dist::ShardJoin join = dist::ShardJoin::Gather);

}  // namespace db
