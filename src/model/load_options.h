// Choices a caller makes about how a model is loaded (load_model, ModelBundle,
// the CLI's --quantize, Python's LLM(quantize=...)).
#pragma once
#include <optional>
#include <string>

#include "backend/backend_device.h"
#include "dist/shard_plan.h"
#include "tensor/dtype.h"

namespace db {

namespace dist {
class Communicator;
}

struct LoadOptions {
  // The type the matrices of a quantized checkpoint (FP8, AWQ, GPTQ) are
  // converted into at load; nullopt: Q8_0 for FP8, Q4_1 (a lossless repack) for
  // AWQ / GPTQ. Other sources hold their weights in computable types already and
  // reject it (model/model_source.h).
  std::optional<DType> quantize;
  // Load a GGUF file through its pre-packed copy (model/packed_cache.h),
  // written on the first load; a checkpoint directory is refused.
  bool pack = false;
  // A tensor-parallel group of several ranks (every rank loads with its own
  // communicator of the group): each rank loads only its shard of a llama / qwen2
  // (model/llama_decoder.h) or deepseek2 model (model/mla_shard.h); rank 0 gets a
  // ShardedModel that drives the others (model/sharded_model.h). Null, or a group
  // of one: the whole model.
  dist::Communicator* tensor_parallel = nullptr;
  dist::ShardJoin tensor_parallel_join = dist::ShardJoin::Gather;  // how the shards' parts meet
  // An expert-parallel group of several ranks: each rank of a deepseek2 model loads
  // only its part of the routed experts (model/expert_shard.h), the rest whole (or
  // split by tensor_parallel too); rank 0 gets a ShardedModel as above.
  dist::Communicator* expert_parallel = nullptr;
  // The job's group, over which rank 0 sends every step to the others (with both
  // groups above: dist/parallel_groups.h). Null: the one group that is split.
  dist::Communicator* world = nullptr;
  // Where the model computes (backend/backend_device.h). Cuda: matrices are handed
  // to the backend in the file's row layout, never repacked for the CPU.
  Device device = Device::Cpu;
};

// The types --quantize accepts: F32, F16, BF16, Q4_0, Q4_1, Q4_K, Q5_0, Q5_1, Q8_0.
bool is_load_quantize_type(DType t);
// The type a name such as "q8_0" or "Q4_K" stands for (any case); throws
// db::Error listing the accepted names otherwise.
DType load_quantize_type_from_name(const std::string& name);

}  // namespace db
