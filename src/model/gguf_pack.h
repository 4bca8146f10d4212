// Pre-packed model files (`deepbatch convert --pack`): a GGUF model file whose
// weight matrices are stored already in the Panels16 layout that the matmul
// kernels of an ISA level read (tensor/panel_layout.h), so that loading it maps
// them and computes nothing per matrix. Everything else (metadata, tokenizer,
// norms, the token embedding, the matrices the loaders read by rows) is copied
// unchanged.
//
// Which matrices: those the loaders multiply by whole (attention and FFN
// projections, experts, the output head; model/weight_loading.h), in a type
// the level prefers packed (kernels/packed_weights.h). A tied output head gets
// its own packed copy as output.weight (the same bytes prepare() would make at
// load), so the file loads as untied with identical outputs. MLA's combined
// attn_kv_b is replaced by the per-head absorbed matrices the loader would
// build from it (model/deepseek_weights.h: transpose_uk), stored as llama.cpp's
// split attn_k_b / attn_v_b with each head's matrix packed on its own, so that
// a DeepSeek file too loads without building anything. A file packed before
// they were (attn_kv_b in rows) still loads: the loader builds them from it.
//
// The file records kPanelLayoutVersion and the level's name (io/gguf.h); a
// build with another layout version refuses it, and a loader at another level
// unpacks or packs each matrix to the layout its own level prefers
// (PackedWeightStore::prepare), so outputs never depend on where a file was
// packed. Other GGUF readers refuse the file: the packed tensors' type ids are
// outside GGML's range.
//
// Memory: the file is written tensor by tensor, a chunk of rows at a time
// (model/gguf_model_writer.h), and the input's pages are handed back as they
// are written; MLA's W_UK^T is built one layer at a time.
#pragma once
#include <cstdint>
#include <string>

#include "util/cpu_features.h"
#include "util/thread_pool.h"

namespace db {

struct GgufPackReport {
  int64_t packed = 0;  // tensors stored pre-packed (a stack of experts counts once)
  int64_t copied = 0;  // tensors stored as rows (copied unchanged, or MLA's split ones built from attn_kv_b)
  uint64_t bytes = 0;  // size of the written file
};

// Writes in_path as a pre-packed file for `level` to out_path. An input with
// attn_kv_b is also opened as a model (model/model_source.h: a name ending in
// .gguf) for its MLA configuration. Throws db::Error naming the path for an
// unreadable input, an input already pre-packed, an attn_kv_b whose shape is
// not the configuration's, or a failed write.
GgufPackReport pack_gguf(const std::string& in_path, const std::string& out_path, IsaLevel level,
                         ThreadPool* pool = nullptr);

// True if a loader multiplies the tensor of this GGUF name by whole matrices
// (never reads its rows), so that it may be stored pre-packed.
bool loader_multiplies_whole(const std::string& gguf_name);

}  // namespace db
