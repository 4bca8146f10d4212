// The interface every model architecture implements, and the entry point that
// opens a model file or checkpoint and builds the right class for it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kvcache/block_copy.h"
#include "model/batch.h"
#include "model/config.h"
#include "model/kv_store.h"
#include "model/load_options.h"
#include "model/mtp_module.h"
#include "model/router_stats.h"
#include "util/thread_pool.h"

namespace db {

class Model {
 public:
  virtual ~Model() = default;

  virtual const ModelConfig& config() const = 0;

  // What this model caches per token and layer. Its KV stores are built from it
  // (KVStore(kv_cache_shape(), num_blocks, block_size, dtype)), and its pool is
  // sized from it (KVCacheSpec); forward() rejects a store of another shape.
  virtual KVCacheShape kv_cache_shape() const = 0;

  // Runs one step over a flat varlen batch: writes the new tokens' K/V to the
  // slots in `attn.slot_mapping`, attends through the block tables, and returns
  // in `logits` the rows of batch.logits_indices, row-major [n_logits][vocab]
  // (resized; its capacity is reused). Scratch memory is kept between calls.
  // Throws db::Error for an inconsistent batch (checked before any state changes)
  // or a KV store of the wrong shape. Not thread-safe: one forward at a time.
  virtual void forward(const Batch& batch, const AttentionMetadata& attn, KVStore& kv, ThreadPool& pool,
                       std::vector<float>& logits) = 0;

  // Called by the runner once it has applied a step's copy-on-write block copies
  // to its KV store, before the step's forward (when it has one). A model split
  // across processes (model/sharded_model.h) sends them on with its next step;
  // others ignore them.
  virtual void note_block_copies(std::span<const BlockCopy> copies) { (void)copies; }

  // Tokens routed per MoE layer and expert since the model was loaded, updated
  // by forward(); nullptr for a model without a router (dense models). Read it
  // on the thread that calls forward(), between calls: the engine copies it
  // into EngineStats after each step, and other threads read that copy.
  virtual const RouterStats* router_stats() const { return nullptr; }

  // The model's multi-token-prediction module (model/mtp_module.h), loaded on
  // the first call; nullptr when the file has none. Once it is loaded, forward()
  // also keeps last_hidden_states().
  virtual MtpModule* mtp(ThreadPool* load_pool = nullptr) {
    (void)load_pool;
    return nullptr;
  }
  // [num_tokens][hidden]: every token's final hidden state (after the output
  // norm) from the last forward(), valid until the next forward() or MTP call;
  // empty unless the MTP module is loaded.
  virtual std::span<const float> last_hidden_states() const { return {}; }

  // The backend whose memory must hold this model's KV stores (KVStore's `memory`):
  // a device backend's (--device cuda); nullptr for host memory.
  virtual ComputeBackend* kv_memory() const { return nullptr; }
};

// Opens a .gguf file or a Hugging Face checkpoint directory and builds the
// model its architecture names (see model/registry.h). Weights stay memory-
// mapped in their stored dtype, except matrices repacked for the running ISA
// level (kernels/packed_weights.h), which are repacked on `load_pool` when
// given (else on the calling thread); the pool is used only during the call.
// The matrices of an FP8 / AWQ / GPTQ checkpoint are converted on the way
// (into options.quantize or the method's default: model/load_options.h), on the
// same pool, and one stderr line says how many, into what, and how long it took.
// Throws db::Error for unknown architectures, missing keys or tensors, and
// tensors of the wrong shape.
std::unique_ptr<Model> load_model(const std::string& path, ThreadPool* load_pool = nullptr,
                                  const LoadOptions& options = {});

}  // namespace db
