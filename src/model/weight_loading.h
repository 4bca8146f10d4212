// What the decoders' weight loaders (model/llama_weights.h, model/deepseek_weights.h)
// share: finding and checking tensors, f32 copies of small ones, repacking
// matrices for matmul, and the whole-model tensors around the layers.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/packed_weights.h"
#include "kernels/weight_replicas.h"
#include "model/config.h"
#include "tensor/tensor.h"
#include "util/thread_pool.h"

namespace db {

class ModelSource;

// The whole-model tensors of a decoder, which a model's weights struct extends with its layers.
struct DecoderGlobalWeights {
  TensorView token_embd;              // {vocab, hidden}
  std::vector<float> output_norm;     // [hidden]
  TensorView output;                  // {vocab, hidden}; the token embedding when tied
  kernels::PackedWeightStore packed;  // owns the repacked matrices the views may point into
  // --numa replicate: copies of what `packed` handed out, one per further node
  // (destroyed before the store, whose matrices it lists).
  kernels::WeightReplicas replicas;
};

// Throws db::Error naming the file and the tensor (`stored`, its name in the file)
// unless t has `shape` and a dtype this build computes with.
void check_tensor(const ModelSource& src, const std::string& stored, const TensorView& t,
                  const std::vector<int64_t>& shape);
// The tensor of GGUF name `name`, checked by check_tensor.
TensorView expect_tensor(const ModelSource& src, const std::string& name, const std::vector<int64_t>& shape);
// The rows x cols values of a tensor of that shape (or {rows} when cols == 0) as f32.
std::vector<float> load_f32(const ModelSource& src, const std::string& name, int64_t rows, int64_t cols = 0);

// Makes matrices ready for matmul: repacked into `packed` on `pool` (or the calling
// thread) where the ISA level prefers it, after which a source in the mapping of a
// GGUF file has its pages released (io/mapped_range.h), and a matrix a quantized
// checkpoint's converter made is freed once all its rows are repacked.
struct MatrixPreparer {
  const ModelSource& src;
  kernels::PackedWeightStore& packed;
  ThreadPool* pool;

  // keep_source: the source is still read in place (the tied embedding), never released.
  TensorView operator()(const TensorView& w, bool keep_source = false) const;
  // For a source read only through a copy (a tensor-parallel column slice): its
  // pages in a GGUF file's mapping are released, a converter may free it.
  void done_with(const TensorView& w) const;
};

// Prints to stderr, once the loaders are done, how the matrices were made ready
// and how long that took since `start`: pre-packed ones mapped in place (a file
// of `deepbatch convert --pack`, model/gguf_pack.h), repacked or unpacked at
// load, and `built` matrices computed from others (MLA's W_UK^T from attn_kv_b).
void report_prepared_weights(const ModelSource& src, const kernels::PackedWeightStore& packed,
                             std::chrono::steady_clock::time_point start, int64_t built = 0);

// Under --numa replicate (a node layout of two or more nodes: util/numa_nodes.h)
// copies every matrix w.packed handed out onto each further node of the layout
// (kernels/weight_replicas.h) and prints the nodes and the memory it took;
// nothing without a layout. Matrices prepared later (an MTP module loaded on
// first use) are read from the original by every thread.
void replicate_weights(const ModelSource& src, DecoderGlobalWeights& w);

// Loads token_embd (kept in place: its rows are looked up, never released).
void load_token_embedding(const ModelSource& src, const ModelConfig& c, DecoderGlobalWeights& w);
// Loads output_norm and output, after the layers; tied, the head gets its own
// prepared copy of the embedding, which stays in the file for row lookups.
void load_output_head(const ModelSource& src, const ModelConfig& c, const MatrixPreparer& prepare,
                      DecoderGlobalWeights& w);

}  // namespace db
